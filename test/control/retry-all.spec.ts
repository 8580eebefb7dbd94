import { retryDeadChunk, InvalidArgumentError, type ScriptContext } from '@app/echomq/internal';
import { retryAllDead } from '@app/echomq/queue/job-control/retry-all-dead';
import type { Redis } from 'ioredis';
import { events, metrics } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { expectFlowConsistent } from '../lifecycle/support/flow';
import { deadJobs, dumpQueue, expectEveryRowInOneSet, repeat } from './support/control';

describe('retry all: dead -> pending with a fresh budget, in chunks', () => {
  let redis: Redis;
  const mint = idMinter(47);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  const context = (): ScriptContext => scriptContext(redis, uniqueQueue('retry-all'));

  it('puts each job back in its own lane at its level, budget base at its attempts, in chunks of 500', async () => {
    const ctx = context();
    const plain = await deadJobs(
      ctx,
      Array.from({ length: 520 }, () => mint()),
    );
    const [vip] = await deadJobs(ctx, [mint()], { lane: 'vip', priority: 4 });

    expect(await retryAllDead(ctx, undefined, repeat)).toBe(521);

    expect(await redis.zcard(ctx.keys.dead)).toBe(0);
    expect(await redis.zcard(ctx.keys.pending)).toBe(520);
    expect(await redis.zrange(ctx.keys.pendingOf('vip', 4), 0, -1)).toEqual([vip]);
    const row = await redis.hgetall(ctx.keys.job(plain[0]));
    expect(row.b).toBe(row.a);
    expect(row.a).toBe('1');
    await expectFlowConsistent(redis, ctx.keys);
    await expectEveryRowInOneSet(redis, ctx.keys);
    const chunks = (await events(redis, ctx.keys)).filter((e) => e.fields.type === 'retried');
    expect(chunks.map((e) => e.fields.ids.split(',').length)).toEqual([500, 21]);
    expect((await metrics(redis, ctx.keys)).retried).toBe(521);
  });

  it('stops at the limit, oldest first', async () => {
    const ctx = context();
    const ids = await deadJobs(
      ctx,
      Array.from({ length: 5 }, () => mint()),
    );
    expect(await retryAllDead(ctx, { limit: 3 }, repeat)).toBe(3);
    expect(await redis.zrange(ctx.keys.pending, 0, -1)).toEqual(ids.slice(0, 3));
    expect(await redis.zrange(ctx.keys.dead, 0, -1)).toEqual(ids.slice(3));
  });

  it('answers a repeated chunk with its first outcome and retries nothing more', async () => {
    const ctx = context();
    const [first, second] = await deadJobs(ctx, [mint(), mint()]);
    expect(await retryDeadChunk(ctx, 1, 'retry-all-1')).toEqual({ count: 1, more: true });
    expect(await retryDeadChunk(ctx, 1, 'retry-all-1')).toEqual({ count: 1, more: true });
    expect(await redis.zrange(ctx.keys.dead, 0, -1)).toEqual([second]);
    expect(await redis.zrange(ctx.keys.pending, 0, -1)).toEqual([first]);
  });

  it.each([[{ limit: 0 }], [{ limit: 1.5 }], [{ limit: 10_000_001 }], [{ count: 3 }]])(
    'refuses %j before anything is sent',
    async (options) => {
      const ctx = context();
      await deadJobs(ctx, [mint()]);
      const before = await dumpQueue(redis, ctx.keys.queue);
      await expect(retryAllDead(ctx, options as never, repeat)).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
    },
  );
});
