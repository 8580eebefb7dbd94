import {
  JobNotFoundError,
  JobStateError,
  claimJobs,
  enqueueJobs,
  failJob,
  retryDead,
  type ClaimedJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { events, expectConsistent, jobRecord, metrics, untouchable } from '../support/assertions';
import { claimSome } from '../support/claims';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { at, claimUpTo, enqueueIn, expectFlowConsistent } from './support/flow';

describe('retry: dead -> pending with a fresh budget', () => {
  let redis: Redis;
  const mint = idMinter(19);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function claimOne(ctx: ScriptContext): Promise<ClaimedJobRecord> {
    return (await claimSome(ctx))[0];
  }

  /** A job that used up a budget of `maxAttempts` and sits in dead. */
  async function dead(maxAttempts: number): Promise<{ ctx: ScriptContext; id: string }> {
    const ctx = scriptContext(redis, uniqueQueue('retry'));
    const id = mint();
    await enqueueJobs(ctx, [jobRecord(id, { maxAttempts })], 60_000);
    for (let i = 0; i < maxAttempts; i++) {
      await failJob(ctx, await claimOne(ctx), { error: `e${i}`, backoffMs: 0, unrecoverable: false });
    }
    expect(await redis.zscore(ctx.keys.dead, id)).toBe('0');
    return { ctx, id };
  }

  it('moves the job to pending, keeps attempts, and sets the budget base to it', async () => {
    const { ctx, id } = await dead(2);
    await redis.del(ctx.keys.wake);
    await retryDead(ctx, id);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.dead).toEqual({});
    expect(snap.sets.pending).toEqual({ [id]: 0 });
    expect(snap.rows[id]).toMatchObject({ a: '2', b: '2', e: 'e1' });
    expect(await metrics(redis, ctx.keys)).toMatchObject({ retried: 1, dead: 1 });
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({ type: 'retried', ids: id });
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
  });

  it('attempts keep counting up after a retry: the next claim carries a higher token', async () => {
    const { ctx, id } = await dead(2);
    await retryDead(ctx, id);
    const next = await claimOne(ctx);
    expect(next).toMatchObject({ id, attempt: 3, budgetBase: 2 });
  });

  it('grants a full fresh budget, and the job dies again only after using it', async () => {
    const { ctx, id } = await dead(2);
    await retryDead(ctx, id);
    const outcomes: string[] = [];
    for (let i = 0; i < 2; i++) {
      outcomes.push(
        (await failJob(ctx, await claimOne(ctx), { error: 'again', backoffMs: 0, unrecoverable: false }))
          .state,
      );
    }
    expect(outcomes).toEqual(['pending', 'dead']);
    expect(await redis.hget(ctx.keys.job(id), 'a')).toBe('4');
    await retryDead(ctx, id);
    expect(await redis.hmget(ctx.keys.job(id), 'a', 'b')).toEqual(['4', '4']);
  });

  it("gives a job without its own budget a fresh one of the next claiming worker's size", async () => {
    const ctx = scriptContext(redis, uniqueQueue('retry-worker-budget'));
    const id = mint();
    await enqueueJobs(ctx, [jobRecord(id, { maxAttempts: undefined })], 60_000);
    const claim = async (prefix: string, maxAttempts: number) =>
      (await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: prefix, maxAttempts })).jobs[0];
    const fail = async (job: ClaimedJobRecord) =>
      (await failJob(ctx, job, { error: 'x', backoffMs: 0, unrecoverable: false })).state;
    expect(await fail(await claim('a', 1))).toBe('dead');
    await retryDead(ctx, id);
    // The budget base moved to 1; a worker of 2 now serves the queue: two more attempts.
    const second = await claim('b', 2);
    expect(second).toMatchObject({ attempt: 2, budgetBase: 1, maxAttempts: 2 });
    expect(await redis.hget(ctx.keys.job(id), 'w')).toBe('2');
    expect(await fail(second)).toBe('pending');
    expect(await fail(await claim('c', 2))).toBe('dead');
  });

  it('a job that died unrecoverably with budget left also comes back with its token intact', async () => {
    const ctx = scriptContext(redis, uniqueQueue('retry'));
    const id = mint();
    await enqueueJobs(ctx, [jobRecord(id, { maxAttempts: 5 })], 60_000);
    await failJob(ctx, await claimOne(ctx), { error: 'bad', backoffMs: 0, unrecoverable: true });
    await retryDead(ctx, id);
    expect((await claimOne(ctx)).attempt).toBe(2);
  });

  it('refuses a job that is not dead with JobStateError and changes nothing', async () => {
    const ctx = scriptContext(redis, uniqueQueue('retry'));
    const [pending, scheduled, active] = [mint(), mint(), mint()];
    await enqueueJobs(
      ctx,
      [jobRecord(active), jobRecord(pending), jobRecord(scheduled, { delayMs: 60_000 })],
      60_000,
    );
    await claimOne(ctx);
    const before = await untouchable(redis, ctx.keys);
    const metricsBefore = await metrics(redis, ctx.keys);
    for (const id of [pending, scheduled, active]) {
      const error = await retryDead(ctx, id).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobStateError);
      expect(error).toMatchObject({ code: 'JOB_STATE', id, expected: 'dead' });
    }
    expect(await untouchable(redis, ctx.keys)).toEqual(before);
    expect(await metrics(redis, ctx.keys)).toEqual(metricsBefore);
  });

  it('refuses an unknown id with JobNotFoundError and writes nothing', async () => {
    const ctx = scriptContext(redis, uniqueQueue('retry'));
    const id = mint();
    await expect(retryDead(ctx, id)).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await redis.exists(ctx.keys.pending, ctx.keys.metrics, ctx.keys.events, ctx.keys.job(id))).toBe(0);
  });

  it('a second retry of the same job is refused: it is no longer dead', async () => {
    const { ctx, id } = await dead(1);
    await retryDead(ctx, id);
    await expect(retryDead(ctx, id)).rejects.toBeInstanceOf(JobStateError);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ retried: 1 });
  });
  describe('with lanes and priorities', () => {
    it('goes back into its own lane at its level, and the lane is offered', async () => {
      const ctx = scriptContext(redis, uniqueQueue('retry-lanes'));
      const [id] = await enqueueIn(ctx, mint, [['acme', 6]], { maxAttempts: 1 });
      const [job] = await claimUpTo(ctx, 1);
      await failJob(ctx, job, { error: 'x', backoffMs: 0, unrecoverable: false });
      await retryDead(ctx, id);
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.pending).toEqual({ [at('acme', 6)]: [id] });
      expect(Object.keys(flow.ready[6] ?? {})).toEqual(['acme']);
      expect(await redis.zscore(ctx.keys.dead, id)).toBeNull();
    });
  });
});
