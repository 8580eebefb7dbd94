import {
  pauseLane,
  JobNotFoundError,
  StaleJobError,
  claimJobs,
  completeJob,
  enqueueJobs,
  extendLeases,
  failJob,
  releaseJobs,
  removeJob,
  type ScriptContext,
  writeLimits,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { events, expectConsistent, jobRecord, metrics, snapshot } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { at, claimUpTo, enqueueIn, expectFlowConsistent } from './support/flow';

describe('remove: any state -> gone', () => {
  let redis: Redis;
  const mint = idMinter(20);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function context(): ScriptContext {
    return scriptContext(redis, uniqueQueue('remove'));
  }

  /** Puts one job in the named state and returns its id. */
  async function jobIn(ctx: ScriptContext, state: 'pending' | 'active' | 'schedule' | 'dead' | 'completed') {
    const id = mint();
    await enqueueJobs(
      ctx,
      [
        jobRecord(id, {
          maxAttempts: 1,
          delayMs: state === 'schedule' ? 60_000 : 0,
          idempotencyKey: `key-${id}`,
        }),
      ],
      60_000,
    );
    if (state === 'active' || state === 'dead' || state === 'completed') {
      const [job] = (await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: 'w' })).jobs;
      if (state === 'dead') await failJob(ctx, job, { error: 'x', backoffMs: 0, unrecoverable: false });
      if (state === 'completed') await completeJob(ctx, job, '"r"', 60_000);
    }
    return id;
  }

  it.each(['pending', 'active', 'schedule', 'dead', 'completed'] as const)(
    'from %s: reports the state, deletes the row and the idempotency key, counts and emits',
    async (state) => {
      const ctx = context();
      const id = await jobIn(ctx, state);
      const bystander = mint();
      await enqueueJobs(ctx, [jobRecord(bystander)], 60_000);
      const before = await snapshot(redis, ctx.keys);

      expect(await removeJob(ctx, id)).toBe(state);

      const after = await expectConsistent(redis, ctx.keys);
      expect(after.rows[id]).toBeUndefined();
      for (const set of Object.values(after.sets)) expect(set[id]).toBeUndefined();
      // Nothing else moved.
      expect(after.rows[bystander]).toEqual(before.rows[bystander]);
      expect(after.sets.pending[bystander]).toBe(0);
      expect(await redis.exists(ctx.keys.idempotency(`key-${id}`))).toBe(0);
      expect((await metrics(redis, ctx.keys)).removed).toBe(1);
      expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({
        type: 'removed',
        ids: id,
        from: state,
      });
    },
  );

  it('makes a claim on a removed active job stale: heartbeat lost, complete / fail / release refused', async () => {
    const ctx = context();
    const id = mint();
    await enqueueJobs(ctx, [jobRecord(id)], 60_000);
    const [job] = (await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: 'w' })).jobs;
    await removeJob(ctx, id);
    expect((await extendLeases(ctx, [job], 30_000)).held).toEqual([false]);
    await expect(completeJob(ctx, job, '1', 60_000)).rejects.toBeInstanceOf(StaleJobError);
    await expect(
      failJob(ctx, job, { error: 'x', backoffMs: 0, unrecoverable: false }),
    ).rejects.toBeInstanceOf(StaleJobError);
    expect(await releaseJobs(ctx, [job])).toEqual([false]);
    // None of them brought the job back.
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.rows).toEqual({});
    expect(snap.sets).toEqual({ pending: {}, active: {}, schedule: {}, dead: {} });
  });

  it('frees the idempotency key: the next enqueue with it creates a new job', async () => {
    const ctx = context();
    const [first, second] = [mint(), mint()];
    await enqueueJobs(ctx, [jobRecord(first, { idempotencyKey: 'order-9' })], 60_000);
    await removeJob(ctx, first);
    expect(await enqueueJobs(ctx, [jobRecord(second, { idempotencyKey: 'order-9' })], 60_000)).toEqual([
      { id: second, created: true },
    ]);
  });

  it('leaves an idempotency key that now belongs to another job alone', async () => {
    const ctx = context();
    const [first, second] = [mint(), mint()];
    await enqueueJobs(ctx, [jobRecord(first, { idempotencyKey: 'shared' })], 60_000);
    await redis.del(ctx.keys.idempotency('shared')); // the key's TTL ran out
    await enqueueJobs(ctx, [jobRecord(second, { idempotencyKey: 'shared' })], 60_000);
    await removeJob(ctx, first);
    expect(await redis.get(ctx.keys.idempotency('shared'))).toBe(second);
  });

  it('refuses an unknown id with JobNotFoundError and writes nothing', async () => {
    const ctx = context();
    const id = mint();
    await expect(removeJob(ctx, id)).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await redis.exists(ctx.keys.metrics, ctx.keys.events)).toBe(0);
  });

  it('a second remove of the same job is refused with JobNotFoundError', async () => {
    const ctx = context();
    const id = await jobIn(ctx, 'pending');
    await removeJob(ctx, id);
    await expect(removeJob(ctx, id)).rejects.toBeInstanceOf(JobNotFoundError);
    expect((await metrics(redis, ctx.keys)).removed).toBe(1);
  });
  describe('with lanes and priorities', () => {
    it('a pending job leaves its own lane; the lane leaves ready at that level only when it has no work left there', async () => {
      const ctx = context();
      const ids = await enqueueIn(ctx, mint, [
        ['acme', 3],
        ['acme', 3],
        ['acme', 0],
      ]);
      expect(await removeJob(ctx, ids[0])).toBe('pending');
      let flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.pending).toEqual({ [at('acme', 3)]: [ids[1]], [at('acme')]: [ids[2]] });
      expect(Object.keys(flow.ready[3] ?? {})).toEqual(['acme']);

      expect(await removeJob(ctx, ids[1])).toBe('pending');
      flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.ready[3]).toBeUndefined();
      expect(Object.keys(flow.ready[0] ?? {})).toEqual(['acme']);
      expect(await redis.exists(ctx.keys.job(ids[1]))).toBe(0);
    });

    it("a pending job of a held lane: its level leaves the lane's held levels with its last job", async () => {
      const ctx = context();
      const [low, high] = await enqueueIn(ctx, mint, [
        ['acme', 0],
        ['acme', 9],
      ]);
      await pauseLane(ctx, 'acme');
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '09' });
      await removeJob(ctx, high);
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0' });
      await removeJob(ctx, low);
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '' });
    });

    it('an active job is counted out of its lane, and a lane its cap held back returns', async () => {
      const ctx = context();
      await writeLimits(ctx, { laneConcurrency: 1 });
      const ids = await enqueueIn(ctx, mint, [
        ['acme', 0],
        ['acme', 0],
      ]);
      const [job] = await claimUpTo(ctx, 5);
      expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0' });
      await redis.del(ctx.keys.wake);
      expect(await removeJob(ctx, job.id)).toBe('active');
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.laneActive).toEqual({});
      expect(flow.held).toEqual({});
      expect(flow.pending).toEqual({ [at('acme')]: [ids[1]] });
      expect(await redis.llen(ctx.keys.wake)).toBe(1);
    });
  });
});
