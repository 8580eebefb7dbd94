import {
  cleanChunk,
  InvalidArgumentError,
  JOB_IDS,
  SNOWFLAKE_EPOCH_MS,
  type ScriptContext,
} from '@app/echomq/internal';
import { cleanJobs } from '@app/echomq/queue/job-control/clean-jobs';
import { luaScript } from '@app/echomq/scripts/lua/prelude';
import type { Redis } from 'ioredis';
import { events, expectConsistent, jobRecord, metrics } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { expectFlowConsistent } from '../lifecycle/support/flow';
import { deadJobs, dumpQueue, enqueue, expectEveryRowInOneSet, oldIds, repeat } from './support/control';

const HOUR = 3_600_000;

describe('clean: jobs of one state older than a bound -> gone, oldest first', () => {
  let redis: Redis;
  const fresh = idMinter(42);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  const context = (): ScriptContext => scriptContext(redis, uniqueQueue('clean'));

  it('finds the id below which every job is older than an instant, as the id encoding does', async () => {
    const floor = luaScript('-- test: first_id_at', `return first_id_at(tonumber(ARGV[1]))`);
    for (const t of [
      SNOWFLAKE_EPOCH_MS,
      SNOWFLAKE_EPOCH_MS + 1,
      Date.now(),
      Date.UTC(2100, 5, 1, 12),
      SNOWFLAKE_EPOCH_MS + 2 ** 42 - 1,
    ]) {
      const expected = JOB_IDS.format(BigInt(t - SNOWFLAKE_EPOCH_MS) << 22n);
      expect(await redis.eval(floor, 1, 'emq:{x}:fence', t)).toBe(expected);
    }
    // Before the id epoch: the smallest id, so nothing sorts below it.
    expect(await redis.eval(floor, 1, 'emq:{x}:fence', SNOWFLAKE_EPOCH_MS - 1)).toBe(JOB_IDS.format(0n));
  });

  it('pending: removes the old jobs of every lane and level, lane by lane, each oldest first, and leaves the young', async () => {
    const ctx = context();
    const old = oldIds(43, 2 * HOUR);
    const places = [
      ['default', 0],
      ['vip', 3],
      ['tenant-a', 9],
      ['vip', 0],
    ] as const;
    const oldOnes = await enqueue(
      ctx,
      Array.from({ length: 12 }, (_, i) =>
        jobRecord(old(), { lane: places[i % 4][0], priority: places[i % 4][1], idempotencyKey: `k${i}` }),
      ),
    );
    const young = await enqueue(ctx, [jobRecord(fresh(), { lane: 'vip', priority: 3 }), jobRecord(fresh())]);

    const removed: string[] = await cleanJobs(ctx, 'pending', { olderThanMs: HOUR, limit: 10 }, repeat);

    // The limit applies in lane order: within each lane and level the oldest go first.
    expect(removed).toHaveLength(10);
    const kept = oldOnes.filter((id) => !removed.includes(id));
    expect(kept).toHaveLength(2);
    for (const at of places.keys()) {
      const group = oldOnes.filter((_, i) => i % 4 === at);
      const taken = group.filter((id) => removed.includes(id));
      expect(group.slice(0, taken.length)).toEqual(taken);
      expect(removed.filter((id) => group.includes(id))).toEqual(taken);
    }
    expect(await expectEveryRowInOneSet(redis, ctx.keys)).toEqual([...kept, ...young].sort());
    const keyOf = (id: string) => `k${oldOnes.indexOf(id)}`;
    expect(await redis.exists(ctx.keys.idempotency(keyOf(removed[0])))).toBe(0);
    expect(await redis.exists(ctx.keys.idempotency(keyOf(kept[0])))).toBe(1);
    await expectFlowConsistent(redis, ctx.keys);
    const cleaned = (await events(redis, ctx.keys)).filter((e) => e.fields.type === 'cleaned');
    expect(cleaned.map((e) => e.fields)).toEqual([
      { type: 'cleaned', ids: removed.join(','), state: 'pending' },
    ]);
    expect((await metrics(redis, ctx.keys)).cleaned).toBe(10);

    // Again with no limit: the last two old ones go; the young stay.
    expect((await cleanJobs(ctx, 'pending', { olderThanMs: HOUR }, repeat)).sort()).toEqual(kept.sort());
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('dead: oldest first, in chunks, up to the limit', async () => {
    const ctx = context();
    const old = oldIds(44, 2 * HOUR);
    const oldOnes = await deadJobs(
      ctx,
      Array.from({ length: 700 }, () => old()),
    );
    await deadJobs(ctx, [fresh()]);
    const removed = await cleanJobs(ctx, 'dead', { olderThanMs: HOUR, limit: 600 }, repeat);
    expect(removed).toEqual(oldOnes.slice(0, 600));
    expect(await redis.zcard(ctx.keys.dead)).toBe(101);
    const chunks = (await events(redis, ctx.keys)).filter((e) => e.fields.type === 'cleaned');
    expect(chunks.map((e) => e.fields.ids.split(',').length)).toEqual([500, 100]);
    await expectConsistent(redis, ctx.keys);
  });

  it('schedule: by enqueue time, not by run-at', async () => {
    const ctx = context();
    const old = oldIds(45, 2 * HOUR);
    // The oldest job runs last: clean goes by the id's time.
    const [a, b, c] = [old(), old(), old()];
    await enqueue(ctx, [
      jobRecord(a, { delayMs: 90_000 }),
      jobRecord(b, { delayMs: 30_000, lane: 'vip' }),
      jobRecord(c, { delayMs: 60_000 }),
    ]);
    // A minute old: young for the hour's bound, old enough that no clock skew makes it newer than now.
    const young = oldIds(46, 60_000)();
    await enqueue(ctx, [jobRecord(young, { delayMs: 10_000 })]);
    expect(await cleanJobs(ctx, 'schedule', { olderThanMs: HOUR, limit: 2 }, repeat)).toEqual([a, b]);
    expect(await redis.zrange(ctx.keys.schedule, 0, -1)).toEqual([young, c]);
    expect(await cleanJobs(ctx, 'schedule', { olderThanMs: 0 }, repeat)).toEqual([c, young]);
    expect((await expectConsistent(redis, ctx.keys)).rows).toEqual({});
  });

  it('answers a repeated chunk with its first ids and removes nothing more', async () => {
    const ctx = context();
    const old = oldIds(46, 2 * HOUR);
    const [first, second] = [old(), old()];
    await enqueue(ctx, [jobRecord(first)]);
    const chunk = { state: 'pending' as const, olderThanMs: HOUR, limit: 500 };
    expect(await cleanChunk(ctx, chunk, 'clean-req-1')).toEqual({ ids: [first], cursor: '' });
    await enqueue(ctx, [jobRecord(second)]);
    expect(await cleanChunk(ctx, chunk, 'clean-req-1')).toEqual({ ids: [first], cursor: '' });
    expect(await redis.zrange(ctx.keys.pending, 0, -1)).toEqual([second]);
  });

  it.each([
    ['active', /use remove|remove\(\)/],
    ['completed', /retainCompletedMs/],
    ['waiting', /pending, schedule or dead/],
  ])('refuses state %s with a clear InvalidArgumentError, writing nothing', async (state, message) => {
    const ctx = context();
    await enqueue(ctx, [jobRecord(fresh())]);
    const before = await dumpQueue(redis, ctx.keys.queue);
    const call = cleanJobs(ctx, state as never, { olderThanMs: 0 }, repeat);
    await expect(call).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(cleanJobs(ctx, state as never, { olderThanMs: 0 }, repeat)).rejects.toThrow(message);
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
  });

  it.each([
    [{ olderThanMs: -1 }, /olderThanMs/],
    [{ olderThanMs: 1.5 }, /olderThanMs/],
    [{ olderThanMs: 0, limit: 100_001 }, /limit must be an integer from 1 to 100,000/],
    [{ olderThanMs: 0, limit: 0 }, /limit/],
    [{ olderThanMs: 0, max: 3 }, /unknown: max/],
  ])('refuses %j before anything is sent', async (options, message) => {
    const ctx = context();
    await enqueue(ctx, [jobRecord(fresh())]);
    const before = await dumpQueue(redis, ctx.keys.queue);
    await expect(cleanJobs(ctx, 'pending', options as never, repeat)).rejects.toThrow(message);
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
  });
});
