import {
  StaleJobError,
  claimJobs,
  enqueueJobs,
  failJob,
  type ClaimedJobRecord,
  type ScriptContext,
  setLaneSettings,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import {
  STALE_KINDS,
  events,
  expectConsistent,
  jobRecord,
  metrics,
  serverNowMs,
  staleScenario,
  untouchable,
} from '../support/assertions';
import { enqueueAndClaim, claimSome } from '../support/claims';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { at, claimUpTo, enqueueIn, expectFlowConsistent } from './support/flow';

describe('fail: active -> schedule | pending | dead', () => {
  let redis: Redis;
  const mint = idMinter(14);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function claimed(maxAttempts: number): Promise<{ ctx: ScriptContext; job: ClaimedJobRecord }> {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'fail', [jobRecord(mint(), { maxAttempts })]);
    return { ctx, job: jobs[0] };
  }

  async function claimOne(ctx: ScriptContext): Promise<ClaimedJobRecord> {
    return (await claimSome(ctx))[0];
  }

  it('with budget left and a backoff: goes to schedule at now + backoff, keeps the error', async () => {
    const { ctx, job } = await claimed(3);
    await redis.del(ctx.keys.wake);
    const before = await serverNowMs(redis);
    const outcome = await failJob(ctx, job, {
      error: 'smtp timeout',
      backoffMs: 45_000,
      unrecoverable: false,
    });
    const after = await serverNowMs(redis);

    expect(outcome.state).toBe('schedule');
    const runAt = outcome.state === 'schedule' ? outcome.runAt : NaN;
    expect(runAt).toBeGreaterThanOrEqual(before + 45_000);
    expect(runAt).toBeLessThanOrEqual(after + 45_000);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.active).toEqual({});
    expect(snap.sets.schedule).toEqual({ [job.id]: runAt });
    expect(snap.rows[job.id]).toMatchObject({ a: '1', e: 'smtp timeout' });
    expect(snap.rows[job.id].c).toBeUndefined();
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 1, claimed: 1, failed: 1 });
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({
      type: 'failed',
      ids: job.id,
      attempt: '1',
      error: 'smtp timeout',
    });
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
  });

  it('with a backoff of 0: goes straight back to pending', async () => {
    const { ctx, job } = await claimed(3);
    expect(await failJob(ctx, job, { error: 'e', backoffMs: 0, unrecoverable: false })).toEqual({
      state: 'pending',
    });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.pending).toEqual({ [job.id]: 0 });
    expect(snap.sets.schedule).toEqual({});
  });

  it('with the budget spent: goes to dead and counts it as dead, not failed', async () => {
    const { ctx, job } = await claimed(2);
    expect((await failJob(ctx, job, { error: 'one', backoffMs: 0, unrecoverable: false })).state).toBe(
      'pending',
    );
    const second = await claimOne(ctx);
    expect(second.attempt).toBe(2);
    expect(await failJob(ctx, second, { error: 'two', backoffMs: 5_000, unrecoverable: false })).toEqual({
      state: 'dead',
    });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.dead).toEqual({ [job.id]: 0 });
    expect(snap.sets.schedule).toEqual({});
    expect(snap.rows[job.id]).toMatchObject({ a: '2', e: 'two' });
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 1, claimed: 2, failed: 1, dead: 1 });
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({
      type: 'dead',
      ids: job.id,
      attempt: '2',
      error: 'two',
    });
  });

  it('with a budget of one attempt: the first failure is final', async () => {
    const { ctx, job } = await claimed(1);
    expect((await failJob(ctx, job, { error: 'x', backoffMs: 1_000, unrecoverable: false })).state).toBe(
      'dead',
    );
    expect(await redis.zscore(ctx.keys.dead, job.id)).toBe('0');
  });

  it('unrecoverable: goes to dead at once, whatever budget is left', async () => {
    const { ctx, job } = await claimed(10);
    expect(await failJob(ctx, job, { error: 'bad address', backoffMs: 1_000, unrecoverable: true })).toEqual({
      state: 'dead',
    });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.dead).toEqual({ [job.id]: 0 });
    expect(snap.rows[job.id]).toMatchObject({ a: '1', e: 'bad address' });
    expect(await metrics(redis, ctx.keys)).toMatchObject({ dead: 1 });
    expect((await metrics(redis, ctx.keys)).failed).toBeUndefined();
  });

  it("without a budget of its own: the claiming worker's decides, the latest claim's winning", async () => {
    const ctx = scriptContext(redis, uniqueQueue('fail-worker-budget'));
    const [id] = [mint()];
    await enqueueJobs(ctx, [jobRecord(id, { maxAttempts: undefined })], 60_000);
    let claims = 0;
    const claim = async (maxAttempts: number) =>
      (
        await claimJobs(ctx, {
          count: 1,
          leaseMs: 60_000,
          claimantPrefix: `w${maxAttempts}-${++claims}`,
          maxAttempts,
        })
      ).jobs[0];
    const fail = async (job: ClaimedJobRecord) =>
      (await failJob(ctx, job, { error: 'x', backoffMs: 0, unrecoverable: false })).state;
    // Two attempts under a worker of 7: room left. The third claim is by a worker of 3: its last.
    expect(await fail(await claim(7))).toBe('pending');
    expect(await fail(await claim(7))).toBe('pending');
    const third = await claim(3);
    expect(third).toMatchObject({ attempt: 3, maxAttempts: 3 });
    expect(await fail(third)).toBe('dead');
    expect(await redis.hmget(ctx.keys.job(id), 'm', 'w')).toEqual([null, '3']);
  });

  it('a row of the previous version (its budget always on it, no worker budget) keeps its budget', async () => {
    const ctx = scriptContext(redis, uniqueQueue('fail-old-row'));
    const id = mint();
    await enqueueJobs(ctx, [jobRecord(id, { maxAttempts: 2 })], 60_000);
    const claim = async (n: number) =>
      (await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: `old${n}`, maxAttempts: 9 }))
        .jobs[0];
    const first = await claim(1);
    expect(first.maxAttempts).toBe(2);
    expect((await failJob(ctx, first, { error: 'x', backoffMs: 0, unrecoverable: false })).state).toBe(
      'pending',
    );
    expect(
      (await failJob(ctx, await claim(2), { error: 'x', backoffMs: 0, unrecoverable: false })).state,
    ).toBe('dead');
    expect(await redis.hexists(ctx.keys.job(id), 'w')).toBe(0);
  });

  it('attempts only grow across fail and re-claim', async () => {
    const { ctx, job } = await claimed(4);
    const seen = [job.attempt];
    let current = job;
    for (let i = 0; i < 3; i++) {
      await failJob(ctx, current, { error: `e${i}`, backoffMs: 0, unrecoverable: false });
      current = await claimOne(ctx);
      seen.push(current.attempt);
    }
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(await redis.hget(ctx.keys.job(job.id), 'a')).toBe('4');
  });

  describe('a stale claim changes nothing and reports STALE', () => {
    it.each(STALE_KINDS)('%s', async (kind) => {
      const ctx = scriptContext(redis, uniqueQueue('fail-stale'));
      const id = mint();
      const stale = await staleScenario(redis, ctx, id, kind);
      const before = await untouchable(redis, ctx.keys);
      const staleCount = (await metrics(redis, ctx.keys)).stale ?? 0;

      for (const unrecoverable of [false, true]) {
        const error = await failJob(ctx, stale, { error: 'late', backoffMs: 0, unrecoverable }).catch(
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(StaleJobError);
        expect(error).toMatchObject({ id, attempt: stale.attempt });
      }

      expect(await untouchable(redis, ctx.keys)).toEqual(before);
      expect((await metrics(redis, ctx.keys)).stale).toBe(staleCount + 2);
      await expectConsistent(redis, ctx.keys);
    });
  });
  describe('with lanes and priorities', () => {
    it("a retry now goes into the job's own lane at its level, and the lane is offered", async () => {
      const ctx = scriptContext(redis, uniqueQueue('fail-lanes'));
      const [id] = await enqueueIn(ctx, mint, [['acme', 7]]);
      const [job] = await claimUpTo(ctx, 1);
      expect(await failJob(ctx, job, { error: 'e', backoffMs: 0, unrecoverable: false })).toEqual({
        state: 'pending',
      });
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.pending).toEqual({ [at('acme', 7)]: [id] });
      expect(Object.keys(flow.ready[7] ?? {})).toEqual(['acme']);
      expect(flow.laneActive).toEqual({});
      expect((await claimUpTo(ctx, 1)).map((next) => next.id)).toEqual([id]);
    });

    it('to schedule or dead: counted out of its lane all the same, and a held lane returns', async () => {
      const ctx = scriptContext(redis, uniqueQueue('fail-lanes'));
      await setLaneSettings(ctx, 'acme', { concurrency: 1 });
      const [first, second, third] = await enqueueIn(
        ctx,
        mint,
        [
          ['acme', 0],
          ['acme', 0],
          ['acme', 0],
        ],
        { maxAttempts: 1 },
      );
      const [job] = await claimUpTo(ctx, 5);
      expect(job.id).toBe(first);
      expect(await failJob(ctx, job, { error: 'e', backoffMs: 0, unrecoverable: false })).toEqual({
        state: 'dead',
      });
      let flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.laneActive).toEqual({});
      expect(flow.held).toEqual({});

      const [next] = await claimUpTo(ctx, 5);
      expect(next.id).toBe(second);
      await redis.hset(ctx.keys.job(next.id), 'm', 3);
      expect((await failJob(ctx, next, { error: 'e', backoffMs: 60_000, unrecoverable: false })).state).toBe(
        'schedule',
      );
      flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.laneActive).toEqual({});
      expect(flow.pending).toEqual({ [at('acme')]: [third] });
    });
  });
});
