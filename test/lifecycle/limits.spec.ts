import {
  InvalidArgumentError,
  claimJobs,
  readLimits,
  writeLimits,
  type FlowLimits,
  type ScriptContext,
  setLaneSettings,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { serverNowMs } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { at, claimUpTo, enqueueIn, expectFlowConsistent } from './support/flow';

const NONE: FlowLimits = {
  rateLimit: null,
  globalConcurrency: null,
  laneConcurrency: null,
  laneRateLimit: null,
};

describe('set limits: the limits every worker of a queue enforces together', () => {
  let redis: Redis;
  const mint = idMinter(62);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function context(): ScriptContext {
    return scriptContext(redis, uniqueQueue('limits'));
  }

  it('a queue nobody configured has none', async () => {
    expect(await readLimits(context())).toEqual(NONE);
  });

  it('writes every limit into the settings hash and reads them back', async () => {
    const ctx = context();
    const limits: FlowLimits = {
      rateLimit: { max: 100, windowMs: 1_000 },
      globalConcurrency: 50,
      laneConcurrency: 5,
      laneRateLimit: { max: 10, windowMs: 60_000 },
    };
    await writeLimits(ctx, limits);
    expect(await redis.hgetall(ctx.keys.settings)).toEqual({
      rm: '100',
      rw: '1000',
      gc: '50',
      lc: '5',
      lm: '10',
      lw: '60000',
    });
    expect(await readLimits(ctx)).toEqual(limits);
  });

  it('a limit left out stays as it is; null clears one', async () => {
    const ctx = context();
    await writeLimits(ctx, { rateLimit: { max: 3, windowMs: 10 }, globalConcurrency: 8, laneConcurrency: 2 });
    await writeLimits(ctx, { globalConcurrency: 9, rateLimit: null });
    expect(await readLimits(ctx)).toEqual({ ...NONE, globalConcurrency: 9, laneConcurrency: 2 });
    await writeLimits(ctx, { globalConcurrency: null, laneConcurrency: null });
    expect(await redis.exists(ctx.keys.settings)).toBe(0);
    expect(await readLimits(ctx)).toEqual(NONE);
  });

  it('nothing given: nothing is sent', async () => {
    const ctx = context();
    await writeLimits(ctx, {});
    await writeLimits(ctx, { globalConcurrency: undefined });
    expect(await redis.exists(ctx.keys.settings)).toBe(0);
  });

  it('a raised lane cap returns the lanes it held back at once, and wakes a worker', async () => {
    const ctx = context();
    await writeLimits(ctx, { laneConcurrency: 1 });
    const ids = await enqueueIn(ctx, mint, [
      ['acme', 0],
      ['acme', 0],
      ['globex', 2],
      ['globex', 2],
    ]);
    expect((await claimUpTo(ctx, 10)).map((job) => job.id).sort()).toEqual([ids[0], ids[2]].sort());
    expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0', globex: '2' });
    await redis.del(ctx.keys.wake);

    await writeLimits(ctx, { laneConcurrency: 2 });
    const flow = await expectFlowConsistent(redis, ctx.keys);
    expect(flow.held).toEqual({});
    expect(Object.keys(flow.ready[0] ?? {})).toEqual(['acme']);
    expect(Object.keys(flow.ready[2] ?? {})).toEqual(['globex']);
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
    expect((await claimUpTo(ctx, 10)).map((job) => job.id).sort()).toEqual([ids[1], ids[3]].sort());
  });

  it('a lane held by its own cap stays held when only the queue-wide lane cap rises', async () => {
    const ctx = context();
    await setLaneSettings(ctx, 'acme', { concurrency: 1 });
    await enqueueIn(ctx, mint, [
      ['acme', 0],
      ['acme', 0],
    ]);
    await claimUpTo(ctx, 10);
    await redis.del(ctx.keys.wake);
    await writeLimits(ctx, { laneConcurrency: 100 });
    expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0' });
    expect(await redis.llen(ctx.keys.wake)).toBe(0);
  });

  it('a raised global cap wakes the worker a full queue had turned away', async () => {
    const ctx = context();
    await writeLimits(ctx, { globalConcurrency: 1 });
    const ids = await enqueueIn(ctx, mint, [
      ['default', 0],
      ['default', 0],
    ]);
    expect(await claimUpTo(ctx, 1)).toHaveLength(1);
    expect(await claimUpTo(ctx, 1)).toEqual([]);
    expect(await redis.exists(ctx.keys.waiting)).toBe(1);
    await redis.del(ctx.keys.wake);

    await writeLimits(ctx, { globalConcurrency: 2 });
    expect(await redis.exists(ctx.keys.waiting)).toBe(0);
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
    expect((await claimUpTo(ctx, 1)).map((job) => job.id)).toEqual([ids[1]]);
  });

  it('a changed rate window starts counting afresh (the old slices mean nothing in the new one)', async () => {
    const ctx = context();
    const hour = 3_600_000;
    await writeLimits(ctx, { rateLimit: { max: 1, windowMs: 1_000 } });
    await enqueueIn(ctx, mint, [
      ['default', 0],
      ['default', 0],
      ['default', 0],
    ]);
    expect(await claimUpTo(ctx, 5)).toHaveLength(1);
    await writeLimits(ctx, { rateLimit: { max: 1, windowMs: hour } });
    expect(await claimUpTo(ctx, 5)).toHaveLength(1);
    const now = await serverNowMs(redis);
    const batch = await claimJobs(ctx, { count: 5, leaseMs: 30_000, claimantPrefix: 'after-change' });
    expect(batch.jobs).toEqual([]);
    // The window opens within the new window (plus a slice), not at some time the old slices made up.
    expect(batch.limitedUntil).toBeGreaterThan(now);
    expect(batch.limitedUntil).toBeLessThanOrEqual(now + hour + hour / 20 + 5);
  });

  it('a repeat of the same request does not undo a later writer', async () => {
    const ctx = context();
    await writeLimits(ctx, { globalConcurrency: 5 }, 'admin-1');
    await writeLimits(ctx, { globalConcurrency: 7 });
    await writeLimits(ctx, { globalConcurrency: 5 }, 'admin-1');
    expect((await readLimits(ctx)).globalConcurrency).toBe(7);
  });

  describe('bad values throw InvalidArgumentError before anything is sent', () => {
    it.each<[string, unknown]>([
      ['rate max 0', { rateLimit: { max: 0, windowMs: 1_000 } }],
      ['rate max past 1,000,000', { rateLimit: { max: 1_000_001, windowMs: 1_000 } }],
      ['rate window past a day', { rateLimit: { max: 1, windowMs: 86_400_001 } }],
      ['rate without a window', { rateLimit: { max: 1 } }],
      ['rate with an unknown field', { rateLimit: { max: 1, windowMs: 1, burst: 2 } }],
      ['rate as a number', { laneRateLimit: 5 }],
      ['global concurrency 0', { globalConcurrency: 0 }],
      ['lane concurrency 1.5', { laneConcurrency: 1.5 }],
      ['lane concurrency as text', { laneConcurrency: '3' }],
      ['an unknown limit', { concurrency: 3 }],
      ['a prototype name', { constructor: 3 }],
    ])('%s', async (_name, limits) => {
      const ctx = context();
      await expect(writeLimits(ctx, limits as Partial<FlowLimits>)).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      expect(await redis.exists(ctx.keys.settings)).toBe(0);
    });
  });

  describe('the script itself refuses bad arguments before writing', () => {
    it.each<[string, (string | number)[]]>([
      ['an unknown field', ['xx', 1]],
      ['a value out of range', ['gc', 0]],
      ['a value that is not an integer', ['lc', '2.5']],
      ['half a rate', ['rm', 5]],
      ['a rate set on one side, cleared on the other', ['lm', 5, 'lw', '']],
      ['a field twice', ['gc', 1, 'gc', 2]],
    ])('%s', async (_name, pairs) => {
      const ctx = context();
      await writeLimits(ctx, { laneConcurrency: 4 });
      const { keys } = ctx;
      const error = await ctx.redis
        .emqSetLimits(
          keys.fence,
          keys.reply('bad'),
          keys.settings,
          keys.wake,
          60_000,
          pairs.length / 2,
          ...pairs,
        )
        .catch((e: unknown) => e);
      expect(String(error)).toMatch(/EMQ_BAD_ARG/);
      expect(await redis.hgetall(ctx.keys.settings)).toEqual({ lc: '4' });
      expect(await redis.exists(keys.reply('bad'))).toBe(0);
    });
  });

  it('jobs without lanes are untouched by any of it: they claim as before', async () => {
    const ctx = context();
    const ids = await enqueueIn(ctx, mint, [
      ['default', 0],
      ['default', 0],
    ]);
    await writeLimits(ctx, { laneConcurrency: 10, globalConcurrency: 10 });
    expect((await claimUpTo(ctx, 5)).map((job) => job.id)).toEqual(ids);
    const flow = await expectFlowConsistent(redis, ctx.keys);
    expect(flow.pending[at('default')]).toBeUndefined();
    expect(flow.laneActive).toEqual({ default: 2 });
  });
});
