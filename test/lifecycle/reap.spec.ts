import {
  StaleJobError,
  claimJobs,
  completeJob,
  enqueueJobs,
  extendLeases,
  reapExpired,
  type ClaimedJobRecord,
  type ScriptContext,
  writeLimits,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { backdate, events, expectConsistent, jobRecord, metrics } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { at, claimUpTo, enqueueIn, expectFlowConsistent } from './support/flow';

describe('reap: expired leases, active -> pending | dead', () => {
  let redis: Redis;
  const mint = idMinter(17);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function setup(
    count: number,
    maxAttempts = 3,
  ): Promise<{ ctx: ScriptContext; jobs: ClaimedJobRecord[] }> {
    const ctx = scriptContext(redis, uniqueQueue('reap'));
    const ids = Array.from({ length: count }, () => mint());
    await enqueueJobs(
      ctx,
      ids.map((id) => jobRecord(id, { maxAttempts })),
      60_000,
    );
    const { jobs } = await claimJobs(ctx, { count, leaseMs: 60_000, claimantPrefix: 'w' });
    return { ctx, jobs };
  }

  it('moves only leases whose deadline passed; live leases keep their deadline', async () => {
    const { ctx, jobs } = await setup(2);
    const [expired, live] = jobs;
    const liveDeadline = Number(await redis.zscore(ctx.keys.active, live.id));
    await backdate(redis, ctx.keys.active, expired.id);
    await redis.del(ctx.keys.wake);

    expect(await reapExpired(ctx, 100)).toEqual({ toPending: 1, toDead: 0, more: false });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.pending).toEqual({ [expired.id]: 0 });
    expect(snap.sets.active).toEqual({ [live.id]: liveDeadline });
    expect(snap.rows[expired.id]).toMatchObject({ a: '1', e: 'lease expired during attempt 1' });
    expect(snap.rows[expired.id].c).toBeUndefined();
    expect(snap.rows[live.id]).toMatchObject({ a: '1', c: live.claimant });
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 2, claimed: 2, reaped: 1 });
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({ type: 'reaped', ids: expired.id });
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
  });

  it('sends a job whose budget is spent to dead', async () => {
    const { ctx, jobs } = await setup(1, 1);
    await backdate(redis, ctx.keys.active, jobs[0].id);
    expect(await reapExpired(ctx, 100)).toEqual({ toPending: 0, toDead: 1, more: false });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.dead).toEqual({ [jobs[0].id]: 0 });
    expect(snap.rows[jobs[0].id].e).toBe('lease expired during attempt 1');
    expect(await metrics(redis, ctx.keys)).toMatchObject({ dead: 1 });
    expect((await metrics(redis, ctx.keys)).reaped).toBeUndefined();
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({
      type: 'dead',
      ids: jobs[0].id,
      error: 'lease expired',
    });
  });

  it('splits one call between pending and dead by each job’s own budget', async () => {
    const ctx = scriptContext(redis, uniqueQueue('reap'));
    const [once, thrice] = [mint(), mint()];
    await enqueueJobs(
      ctx,
      [jobRecord(once, { maxAttempts: 1 }), jobRecord(thrice, { maxAttempts: 3 })],
      60_000,
    );
    await claimJobs(ctx, { count: 2, leaseMs: 60_000, claimantPrefix: 'w' });
    await backdate(redis, ctx.keys.active, once);
    await backdate(redis, ctx.keys.active, thrice);
    expect(await reapExpired(ctx, 100)).toEqual({ toPending: 1, toDead: 1, more: false });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.dead).toEqual({ [once]: 0 });
    expect(snap.sets.pending).toEqual({ [thrice]: 0 });
  });

  it("decides a job without its own budget by the budget its last claim's worker recorded", async () => {
    const ctx = scriptContext(redis, uniqueQueue('reap-worker-budget'));
    const [ours, theirs] = [mint(), mint()];
    await enqueueJobs(
      ctx,
      [jobRecord(ours, { maxAttempts: undefined }), jobRecord(theirs, { maxAttempts: undefined })],
      60_000,
    );
    // One claim each, by workers of budget 1 and 2: the reaper knows neither worker's options.
    await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: 'w1', maxAttempts: 1 });
    await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: 'w2', maxAttempts: 2 });
    await backdate(redis, ctx.keys.active, ours);
    await backdate(redis, ctx.keys.active, theirs);
    expect(await reapExpired(ctx, 100)).toEqual({ toPending: 1, toDead: 1, more: false });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.dead).toEqual({ [ours]: 0 });
    expect(snap.sets.pending).toEqual({ [theirs]: 0 });
  });

  it('is bounded per call and says when more expired leases remain', async () => {
    const { ctx, jobs } = await setup(3);
    for (const job of jobs) await backdate(redis, ctx.keys.active, job.id);
    expect(await reapExpired(ctx, 2)).toEqual({ toPending: 2, toDead: 0, more: true });
    expect(await reapExpired(ctx, 2)).toEqual({ toPending: 1, toDead: 0, more: false });
    expect(await reapExpired(ctx, 2)).toEqual({ toPending: 0, toDead: 0, more: false });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.sets.pending)).toEqual(jobs.map((j) => j.id));
  });

  it('with nothing expired changes nothing and emits nothing', async () => {
    const { ctx } = await setup(2);
    const before = await expectConsistent(redis, ctx.keys);
    const eventCount = await redis.xlen(ctx.keys.events);
    expect(await reapExpired(ctx, 100)).toEqual({ toPending: 0, toDead: 0, more: false });
    expect(await expectConsistent(redis, ctx.keys)).toEqual(before);
    expect(await redis.xlen(ctx.keys.events)).toBe(eventCount);
  });

  it('makes the old claim stale: its heartbeat and complete fail, the next claim gets a higher token', async () => {
    const { ctx, jobs } = await setup(1);
    const old = jobs[0];
    await backdate(redis, ctx.keys.active, old.id);
    await reapExpired(ctx, 100);
    expect((await extendLeases(ctx, [old], 60_000)).held).toEqual([false]);
    await expect(completeJob(ctx, old, '1', 0)).rejects.toBeInstanceOf(StaleJobError);
    const [next] = (await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: 'w2' })).jobs;
    expect(next.id).toBe(old.id);
    expect(next.attempt).toBe(old.attempt + 1);
    await completeJob(ctx, next, '1', 0);
    await expectConsistent(redis, ctx.keys);
  });

  it('reaping twice (two reapers) moves each job once', async () => {
    const { ctx, jobs } = await setup(2);
    for (const job of jobs) await backdate(redis, ctx.keys.active, job.id);
    const [a, b] = await Promise.all([reapExpired(ctx, 100), reapExpired(ctx, 100)]);
    expect(a.toPending + b.toPending).toBe(2);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ reaped: 2 });
    await expectConsistent(redis, ctx.keys);
  });

  it('drops an active member with no row and counts the orphan', async () => {
    const ctx = scriptContext(redis, uniqueQueue('reap'));
    const orphan = mint();
    await redis.zadd(ctx.keys.active, 1, orphan);
    expect(await reapExpired(ctx, 100)).toEqual({ toPending: 0, toDead: 0, more: false });
    expect(await redis.zcard(ctx.keys.active)).toBe(0);
    expect(await metrics(redis, ctx.keys)).toEqual({ orphans: 1 });
  });
  describe('with lanes and priorities', () => {
    it("frees the lanes of a crashed worker's jobs: each back in its lane, its cap's held lane returns", async () => {
      const ctx = scriptContext(redis, uniqueQueue('reap-lanes'));
      await writeLimits(ctx, { laneConcurrency: 1 });
      const ids = await enqueueIn(ctx, mint, [
        ['acme', 4],
        ['acme', 4],
        ['globex', 0],
      ]);
      const jobs = await claimUpTo(ctx, 10, 60_000);
      expect(jobs.map((job) => job.id).sort()).toEqual([ids[0], ids[2]].sort());
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '4' });
      for (const job of jobs) await backdate(redis, ctx.keys.active, job.id);
      await redis.del(ctx.keys.wake);

      expect(await reapExpired(ctx, 100)).toEqual({ toPending: 2, toDead: 0, more: false });
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.laneActive).toEqual({});
      expect(flow.held).toEqual({});
      expect(flow.pending).toEqual({ [at('acme', 4)]: [ids[0], ids[1]], [at('globex')]: [ids[2]] });
      expect(await redis.llen(ctx.keys.wake)).toBe(1);
    });

    it('a lease reaped to dead is counted out of its lane too', async () => {
      const ctx = scriptContext(redis, uniqueQueue('reap-lanes'));
      await enqueueIn(ctx, mint, [['acme', 0]], { maxAttempts: 1 });
      const [job] = await claimUpTo(ctx, 1, 60_000);
      await backdate(redis, ctx.keys.active, job.id);
      expect(await reapExpired(ctx, 100)).toEqual({ toPending: 0, toDead: 1, more: false });
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.laneActive).toEqual({});
      expect(flow.pending).toEqual({});
    });
  });
});
