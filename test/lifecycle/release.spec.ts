import {
  pauseLane,
  failJob,
  readJobView,
  releaseJobs,
  toJobView,
  type ClaimedJobRecord,
  type JobId,
  type ScriptContext,
  writeLimits,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import {
  STALE_KINDS,
  events,
  expectConsistent,
  jobRecord,
  metrics,
  staleScenario,
  untouchable,
} from '../support/assertions';
import { enqueueAndClaim, claimSome } from '../support/claims';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { at, claimUpTo, enqueueIn, expectFlowConsistent } from './support/flow';

describe('release: active -> pending without spending the retry budget', () => {
  let redis: Redis;
  const mint = idMinter(16);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function claimOne(ctx: ScriptContext): Promise<ClaimedJobRecord> {
    return (await claimSome(ctx))[0];
  }

  async function setup(count: number, maxAttempts = 3) {
    const records = Array.from({ length: count }, () => jobRecord(mint(), { maxAttempts }));
    return enqueueAndClaim(redis, 'release', records);
  }

  it('moves the jobs back to pending, keeps attempts, moves the budget base up, drops the claimant', async () => {
    const { ctx, jobs } = await setup(2);
    await redis.del(ctx.keys.wake);
    expect(await releaseJobs(ctx, jobs)).toEqual([true, true]);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.active).toEqual({});
    expect(snap.sets.pending).toEqual({ [jobs[0].id]: 0, [jobs[1].id]: 0 });
    for (const job of jobs) {
      expect(snap.rows[job.id]).toMatchObject({ a: '1', b: '1' });
      expect(snap.rows[job.id].c).toBeUndefined();
    }
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 2, claimed: 2, released: 2 });
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({
      type: 'released',
      ids: `${jobs[0].id},${jobs[1].id}`,
    });
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
  });

  it('restores the retry budget: the job view shows every attempt left again', async () => {
    const { ctx, jobs } = await setup(1, 1);
    const id = jobs[0].id as JobId;
    expect(toJobView(ctx.keys.queue, id, await readJobView(ctx, id))?.attemptsLeft).toBe(0);
    await releaseJobs(ctx, jobs);
    const view = toJobView(ctx.keys.queue, id, await readJobView(ctx, id));
    expect(view).toMatchObject({ state: 'pending', attempts: 1, maxAttempts: 1, attemptsLeft: 1 });
  });

  it('released claims do not count against the job: only real failures spend the budget', async () => {
    const { ctx, jobs } = await setup(1, 2);
    let claim = jobs[0];
    // Claimed and released twice (two graceful shutdowns), then one real failure.
    for (let i = 0; i < 2; i++) {
      expect(await releaseJobs(ctx, [claim])).toEqual([true]);
      claim = await claimOne(ctx);
    }
    expect(claim.attempt).toBe(3);
    expect(claim.budgetBase).toBe(2);
    expect((await failJob(ctx, claim, { error: 'e1', backoffMs: 0, unrecoverable: false })).state).toBe(
      'pending',
    );
    claim = await claimOne(ctx);
    expect(claim.attempt).toBe(4);
    expect((await failJob(ctx, claim, { error: 'e2', backoffMs: 0, unrecoverable: false })).state).toBe(
      'dead',
    );
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.rows[claim.id]).toMatchObject({ a: '4', b: '2', e: 'e2' });
  });

  it('in a mixed batch, releases what it holds and leaves the rest alone', async () => {
    const { ctx, jobs } = await setup(3);
    const lostScore = await redis.zscore(ctx.keys.active, jobs[1].id);
    expect(await releaseJobs(ctx, [jobs[0], { ...jobs[1], attempt: 7 }, jobs[2]])).toEqual([
      true,
      false,
      true,
    ]);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.sets.pending).sort()).toEqual([jobs[0].id, jobs[2].id].sort());
    expect(snap.sets.active).toEqual({ [jobs[1].id]: Number(lostScore) });
    expect(snap.rows[jobs[1].id]).toMatchObject({ a: '1', c: jobs[1].claimant });
    expect(snap.rows[jobs[1].id].b).toBeUndefined();
    expect(await metrics(redis, ctx.keys)).toMatchObject({ released: 2, stale: 1 });
  });

  it('an empty release sends nothing', async () => {
    const ctx = scriptContext(redis, uniqueQueue('release'));
    expect(await releaseJobs(ctx, [])).toEqual([]);
    expect(await redis.exists(ctx.keys.metrics)).toBe(0);
  });

  describe('a stale claim changes nothing and is reported as not released', () => {
    it.each(STALE_KINDS)('%s', async (kind) => {
      const ctx = scriptContext(redis, uniqueQueue('release-stale'));
      const id = mint();
      const stale = await staleScenario(redis, ctx, id, kind);
      const before = await untouchable(redis, ctx.keys);
      const staleCount = (await metrics(redis, ctx.keys)).stale ?? 0;

      expect(await releaseJobs(ctx, [stale])).toEqual([false]);

      expect(await untouchable(redis, ctx.keys)).toEqual(before);
      expect((await metrics(redis, ctx.keys)).stale).toBe(staleCount + 1);
      expect((await metrics(redis, ctx.keys)).released).toBeUndefined();
      await expectConsistent(redis, ctx.keys);
    });
  });
  describe('with lanes and priorities', () => {
    it('puts each job back into its own lane at its level, in mint order, and counts them out', async () => {
      const ctx = scriptContext(redis, uniqueQueue('release-lanes'));
      const ids = await enqueueIn(ctx, mint, [
        ['acme', 0],
        ['globex', 5],
        ['acme', 0],
        ['default', 0],
      ]);
      const jobs = await claimUpTo(ctx, 10);
      expect(jobs).toHaveLength(4);
      expect((await expectFlowConsistent(redis, ctx.keys)).laneActive).toEqual({
        acme: 2,
        globex: 1,
        default: 1,
      });

      expect(await releaseJobs(ctx, jobs)).toEqual([true, true, true, true]);
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.pending).toEqual({
        [at('acme')]: [ids[0], ids[2]],
        [at('globex', 5)]: [ids[1]],
        [at('default')]: [ids[3]],
      });
      expect(flow.laneActive).toEqual({});
      expect(Object.keys(flow.ready[0] ?? {}).sort()).toEqual(['acme', 'default']);
      expect(Object.keys(flow.ready[5] ?? {})).toEqual(['globex']);
    });

    it('a lane its cap held back returns with its released job', async () => {
      const ctx = scriptContext(redis, uniqueQueue('release-lanes'));
      await writeLimits(ctx, { laneConcurrency: 1 });
      const [first, second] = await enqueueIn(ctx, mint, [
        ['acme', 0],
        ['acme', 0],
      ]);
      const jobs = await claimUpTo(ctx, 10);
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0' });
      await releaseJobs(ctx, jobs);
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.held).toEqual({});
      expect(flow.pending).toEqual({ [at('acme')]: [first, second] });
    });

    it("a job released into a paused lane waits there, noted for the lane's return", async () => {
      const ctx = scriptContext(redis, uniqueQueue('release-lanes'));
      const [id] = await enqueueIn(ctx, mint, [['acme', 3]]);
      const jobs = await claimUpTo(ctx, 1);
      await pauseLane(ctx, 'acme');
      await releaseJobs(ctx, jobs);
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.held).toEqual({ acme: '3' });
      expect(flow.pending).toEqual({ [at('acme', 3)]: [id] });
      expect(await claimUpTo(ctx, 1)).toEqual([]);
    });
  });
});
