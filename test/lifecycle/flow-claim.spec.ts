import {
  claimJobs,
  completeJobs,
  reapExpired,
  resumeLane,
  throttleJob,
  writeLimits,
  type ClaimedJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { serverNowMs } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { claimUpTo, enqueueIn, expectFlowConsistent, flowSnapshot, flowViolations } from './support/flow';

/**
 * The claim's choices in the situations a review of the first version found wrong: a lane
 * that runs empty at each claim, the next run-at after a lane-rate hold, a cleared lane rate
 * limit, a lane throttle, and the 'waiting' flag of globalConcurrency.
 */
describe('claim: flow control', () => {
  let redis: Redis;
  let ctx: ScriptContext;
  const mint = idMinter(41);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });
  beforeEach(() => {
    ctx = scriptContext(redis, uniqueQueue('flow-claim'));
  });

  const lanes = (jobs: readonly ClaimedJobRecord[]): string[] => jobs.map((job) => job.lane);

  it('charges a lane that runs empty at each claim, so a backlogged lane still gets its turns', async () => {
    // 'z' is backlogged; 'b' gets one job after each claim and runs empty at once. Names are
    // chosen so that ties go to the refilling lane: it must still not take every turn.
    await enqueueIn(
      ctx,
      mint,
      Array.from({ length: 20 }, () => ['z', 0] as const),
    );
    const order: string[] = [];
    for (let i = 0; i < 12; i++) {
      order.push(...lanes(await claimUpTo(ctx, 1)));
      await enqueueIn(ctx, mint, [['b', 0]]);
    }
    expect(order.filter((lane) => lane === 'z').length).toBeGreaterThanOrEqual(5);
    expect(order.filter((lane) => lane === 'b').length).toBeGreaterThanOrEqual(5);
    // Never two turns of one lane in a row while the other has work.
    for (let i = 2; i < order.length; i++) expect(order.slice(i - 2, i + 1)).not.toEqual(['b', 'b', 'b']);
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('reports the lane-rate opening as the next run-at when the walk holds a lane by its rate', async () => {
    await writeLimits(ctx, { laneRateLimit: { max: 2, windowMs: 60_000 } });
    await enqueueIn(
      ctx,
      mint,
      Array.from({ length: 5 }, () => ['a', 0] as const),
    );
    const before = await serverNowMs(redis);
    const batch = await claimJobs(ctx, { count: 5, leaseMs: 30_000, claimantPrefix: 'rate-next' });
    expect(batch.jobs).toHaveLength(2);
    const timer = Number(await redis.zscore(ctx.keys.laneTimers, 'a'));
    expect(timer).toBeGreaterThan(before);
    expect(batch.nextRunAt).toBe(timer);
  });

  it('lets rate-held lanes go when the lane rate limit is cleared', async () => {
    await writeLimits(ctx, { laneRateLimit: { max: 1, windowMs: 86_400_000 } });
    await enqueueIn(ctx, mint, [
      ['a', 0],
      ['a', 0],
    ]);
    expect(lanes(await claimUpTo(ctx, 2))).toEqual(['a']);
    expect(await redis.zscore(ctx.keys.laneTimers, 'a')).not.toBeNull();
    await writeLimits(ctx, { laneRateLimit: null });
    expect(await redis.exists(ctx.keys.laneTimers)).toBe(0);
    expect(lanes(await claimUpTo(ctx, 2))).toEqual(['a']);
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('keeps a throttled lane held when the lane rate limit changes, and wakes a worker', async () => {
    await writeLimits(ctx, { laneRateLimit: { max: 10, windowMs: 1_000 } });
    await enqueueIn(ctx, mint, [
      ['a', 0],
      ['a', 0],
    ]);
    const [job] = await claimUpTo(ctx, 1);
    await redis.del(ctx.keys.wake);
    await throttleJob(ctx, job, 3_600_000, 'lane');
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
    expect(await redis.zscore(ctx.keys.laneHolds, 'a')).not.toBeNull();
    await writeLimits(ctx, { laneRateLimit: null });
    expect(await claimUpTo(ctx, 2)).toEqual([]);
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('lifts a throttle hold of a lane when the lane is resumed', async () => {
    await enqueueIn(ctx, mint, [
      ['a', 0],
      ['a', 0],
    ]);
    const [job] = await claimUpTo(ctx, 1);
    await throttleJob(ctx, job, 3_600_000, 'lane');
    expect(await claimUpTo(ctx, 2)).toEqual([]);
    await resumeLane(ctx, 'a');
    expect(await redis.zscore(ctx.keys.laneHolds, 'a')).toBeNull();
    expect(lanes(await claimUpTo(ctx, 2))).toEqual(['a', 'a']);
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('counts the default lane right when a throttle is the first use of flow control', async () => {
    await enqueueIn(ctx, mint, [
      ['default', 0],
      ['default', 0],
    ]);
    const [first, second] = await claimUpTo(ctx, 2);
    // No mark yet: the default lane's active jobs are not counted.
    expect(await redis.exists(ctx.keys.flow)).toBe(0);
    await throttleJob(ctx, first, 1_000, 'queue');
    expect(await redis.hget(ctx.keys.laneActive, 'default')).toBe('1');
    await completeJobs(ctx, [{ claim: second, result: '' }], 0);
    expect(await redis.hget(ctx.keys.laneActive, 'default')).toBeNull();
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('the reaper resets lane counts that drifted once nothing is active, and a lane they held returns', async () => {
    await writeLimits(ctx, { laneConcurrency: 1 });
    await enqueueIn(ctx, mint, [['a', 0]]);
    // A count left by a row deleted behind EchoMQ's back: one active job of 'a' that is not.
    await redis.hset(ctx.keys.laneActive, 'a', 1);
    expect(await claimUpTo(ctx, 1)).toEqual([]);
    expect(await flowViolations(redis, ctx.keys, await flowSnapshot(redis, ctx.keys))).not.toEqual([]);
    await reapExpired(ctx, 100);
    expect(await redis.exists(ctx.keys.laneActive)).toBe(0);
    expect(lanes(await claimUpTo(ctx, 1))).toEqual(['a']);
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('holds a capped lane at every level, so no level keeps it ready', async () => {
    await writeLimits(ctx, { laneConcurrency: 1 });
    await enqueueIn(ctx, mint, [
      ['x', 5],
      ['x', 3],
      ['b', 3],
      ['b', 3],
    ]);
    expect(lanes(await claimUpTo(ctx, 1))).toEqual(['x']);
    await enqueueIn(ctx, mint, [['x', 5]]);
    expect(lanes(await claimUpTo(ctx, 1))).toEqual(['b']);
    await enqueueIn(ctx, mint, [['x', 3]]);
    const snap = await expectFlowConsistent(redis, ctx.keys);
    expect(snap.held.x).toBeDefined();
    expect(snap.ready[3]?.x).toBeUndefined();
  });

  it('flags a slot wait under globalConcurrency only when there is work to wait for', async () => {
    await writeLimits(ctx, { globalConcurrency: 2 });
    await enqueueIn(ctx, mint, [
      ['default', 0],
      ['default', 0],
    ]);
    const claimed = await claimUpTo(ctx, 2);
    expect(claimed).toHaveLength(2);
    expect(await claimUpTo(ctx, 5)).toEqual([]);
    expect(await redis.get(ctx.keys.waiting)).toBeNull();
    await enqueueIn(ctx, mint, [['default', 0]]);
    expect(await claimUpTo(ctx, 5)).toEqual([]);
    expect(await redis.get(ctx.keys.waiting)).toBe('1');
    await redis.del(ctx.keys.wake);
    await completeJobs(ctx, [{ claim: claimed[0], result: '' }], 0);
    expect(await redis.get(ctx.keys.waiting)).toBeNull();
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
  });
});
