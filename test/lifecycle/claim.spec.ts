import { claimJobs, enqueueJobs, InvalidArgumentError, type ScriptContext } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { backdate, events, expectConsistent, jobRecord, metrics, serverNowMs } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

describe('claim: pending -> active', () => {
  let redis: Redis;
  const mint = idMinter(12);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function context(): ScriptContext {
    return scriptContext(redis, uniqueQueue('claim'));
  }

  async function enqueue(ctx: ScriptContext, count: number, overrides = {}): Promise<string[]> {
    const ids = Array.from({ length: count }, () => mint());
    await enqueueJobs(
      ctx,
      ids.map((id) => jobRecord(id, overrides)),
      60_000,
    );
    return ids;
  }

  it('moves the job to active at now + lease, bumps attempts, records the claimant', async () => {
    const ctx = context();
    const [id] = await enqueue(ctx, 1, { data: '{"x":1}', name: 'resize', maxAttempts: 5 });
    const before = await serverNowMs(redis);
    const batch = await claimJobs(ctx, { count: 1, leaseMs: 15_000, claimantPrefix: 'w1:c1' });
    const after = await serverNowMs(redis);

    expect(batch.jobs).toEqual([
      {
        id,
        attempt: 1,
        claimant: 'w1:c1.0',
        data: '{"x":1}',
        name: 'resize',
        maxAttempts: 5,
        budgetBase: 0,
        backoff: null,
        lane: 'default',
        priority: 0,
        timeoutMs: null,
        suspect: false,
      },
    ]);
    expect(batch.suspectAhead).toBe(false);
    expect(batch.leaseDeadline).toBeGreaterThanOrEqual(before + 15_000);
    expect(batch.serverNow).toBe(batch.leaseDeadline - 15_000);
    expect(batch.limitedUntil).toBeNull();
    expect(batch.leaseDeadline).toBeLessThanOrEqual(after + 15_000);
    expect(batch.nextRunAt).toBeNull();

    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.pending).toEqual({});
    expect(snap.sets.active).toEqual({ [id]: batch.leaseDeadline });
    expect(snap.rows[id]).toMatchObject({ a: '1', c: 'w1:c1.0', d: '{"x":1}', m: '5' });
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 1, claimed: 1 });
    expect((await events(redis, ctx.keys)).map((e) => e.fields)).toEqual([
      { type: 'enqueued', ids: id },
      { type: 'claimed', ids: id },
    ]);
  });

  it("gives a job without its own budget the claiming worker's, recorded on the row by every claim", async () => {
    const ctx = context();
    const [own] = await enqueue(ctx, 1, { maxAttempts: 4 });
    const [none] = await enqueue(ctx, 1, { maxAttempts: undefined });
    const first = await claimJobs(ctx, { count: 2, leaseMs: 10_000, claimantPrefix: 'w7', maxAttempts: 7 });
    expect(first.jobs.map((j) => [j.id, j.maxAttempts])).toEqual([
      [own, 4],
      [none, 7],
    ]);
    let snap = await expectConsistent(redis, ctx.keys);
    expect(snap.rows[own]).toMatchObject({ m: '4' });
    expect(snap.rows[own].w).toBeUndefined();
    expect(snap.rows[none]).toMatchObject({ w: '7' });
    expect(snap.rows[none].m).toBeUndefined();

    // Back to pending, then a worker configured otherwise claims: its budget is the one in force.
    await redis.multi().zrem(ctx.keys.active, own, none).zadd(ctx.keys.pending, 0, own, 0, none).exec();
    const second = await claimJobs(ctx, { count: 2, leaseMs: 10_000, claimantPrefix: 'w2', maxAttempts: 2 });
    expect(second.jobs.map((j) => j.maxAttempts)).toEqual([4, 2]);
    snap = await expectConsistent(redis, ctx.keys);
    expect(snap.rows[none]).toMatchObject({ w: '2', a: '2' });
    // A repeat of the claim (its reply lost) reports the budget the claim recorded.
    const again = await claimJobs(ctx, { count: 2, leaseMs: 10_000, claimantPrefix: 'w2', maxAttempts: 2 });
    expect(again.jobs).toEqual(second.jobs);
  });

  it('returns the backoff a job carries of its own, and claims with the built-in budget when given none', async () => {
    const ctx = context();
    const backoff = '{"type":"fixed","delayMs":250}';
    const [id] = await enqueue(ctx, 1, { maxAttempts: undefined, backoff });
    const { jobs } = await claimJobs(ctx, { count: 1, leaseMs: 10_000, claimantPrefix: 'w' });
    expect(jobs).toMatchObject([{ id, maxAttempts: 3, backoff }]);
    expect((await expectConsistent(redis, ctx.keys)).rows[id]).toMatchObject({ w: '3', o: backoff });
  });

  it('refuses a worker budget outside 1 .. 1,000,000 and claims nothing', async () => {
    const ctx = context();
    await enqueue(ctx, 1);
    for (const maxAttempts of [0, 1.5, 1_000_001]) {
      await expect(
        claimJobs(ctx, { count: 1, leaseMs: 10_000, claimantPrefix: `bad${maxAttempts}`, maxAttempts }),
      ).rejects.toThrow(InvalidArgumentError);
    }
    expect(await redis.zcard(ctx.keys.pending)).toBe(1);
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 1 });
  });

  it('claims n at a time in mint order, whatever order the jobs were enqueued in', async () => {
    const ctx = context();
    const ids = Array.from({ length: 5 }, () => mint());
    for (const id of [ids[3], ids[1], ids[4], ids[0], ids[2]]) {
      await enqueueJobs(ctx, [jobRecord(id)], 60_000);
    }
    const first = await claimJobs(ctx, { count: 2, leaseMs: 10_000, claimantPrefix: 'a' });
    const second = await claimJobs(ctx, { count: 2, leaseMs: 10_000, claimantPrefix: 'b' });
    const third = await claimJobs(ctx, { count: 2, leaseMs: 10_000, claimantPrefix: 'c' });
    const fourth = await claimJobs(ctx, { count: 2, leaseMs: 10_000, claimantPrefix: 'd' });
    expect(first.jobs.map((j) => j.id)).toEqual(ids.slice(0, 2));
    expect(second.jobs.map((j) => j.id)).toEqual(ids.slice(2, 4));
    expect(third.jobs.map((j) => j.id)).toEqual(ids.slice(4));
    expect(fourth.jobs).toEqual([]);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.sets.active).sort()).toEqual(ids);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ claimed: 5 });
  });

  it('gives every claimed job a distinct claimant, within a batch and across batches', async () => {
    const ctx = context();
    await enqueue(ctx, 6);
    const one = await claimJobs(ctx, { count: 4, leaseMs: 10_000, claimantPrefix: 'w1:1' });
    const two = await claimJobs(ctx, { count: 4, leaseMs: 10_000, claimantPrefix: 'w2:1' });
    const claimants = [...one.jobs, ...two.jobs].map((j) => j.claimant);
    expect(claimants).toHaveLength(6);
    expect(new Set(claimants).size).toBe(6);
    for (const job of [...one.jobs, ...two.jobs]) {
      expect(await redis.hget(ctx.keys.job(job.id), 'c')).toBe(job.claimant);
    }
  });

  it('gives a re-claimed job a new token and a new claimant', async () => {
    const ctx = context();
    const [id] = await enqueue(ctx, 1);
    const first = (await claimJobs(ctx, { count: 1, leaseMs: 10_000, claimantPrefix: 'w1' })).jobs[0];
    // The lease runs out and the job goes back to pending, as the reaper would move it.
    await redis.multi().zrem(ctx.keys.active, id).zadd(ctx.keys.pending, 0, id).exec();
    const second = (await claimJobs(ctx, { count: 1, leaseMs: 10_000, claimantPrefix: 'w2' })).jobs[0];
    expect(second.attempt).toBe(first.attempt + 1);
    expect(second.claimant).not.toBe(first.claimant);
  });

  it('promotes due scheduled jobs first and claims them in the same call', async () => {
    const ctx = context();
    const [due] = await enqueue(ctx, 1, { delayMs: 60_000 });
    const [notDue] = await enqueue(ctx, 1, { delayMs: 120_000 });
    const [waiting] = await enqueue(ctx, 1);
    await backdate(redis, ctx.keys.schedule, due);
    const notDueAt = Number(await redis.zscore(ctx.keys.schedule, notDue));

    const batch = await claimJobs(ctx, { count: 10, leaseMs: 10_000, claimantPrefix: 'w' });
    // The promoted job was minted before the waiting one, so it comes first.
    expect(batch.jobs.map((j) => j.id)).toEqual([due, waiting]);
    expect(batch.nextRunAt).toBe(notDueAt);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.schedule).toEqual({ [notDue]: notDueAt });
    expect(Object.keys(snap.sets.active).sort()).toEqual([due, waiting].sort());
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 3, promoted: 1, claimed: 2 });
    const types = (await events(redis, ctx.keys)).map((e) => e.fields);
    expect(types.slice(-2)).toEqual([
      { type: 'promoted', ids: due },
      { type: 'claimed', ids: `${due},${waiting}` },
    ]);
  });

  it('honours the promote limit', async () => {
    const ctx = context();
    const ids = await enqueue(ctx, 3, { delayMs: 60_000 });
    for (const id of ids) await backdate(redis, ctx.keys.schedule, id);
    const batch = await claimJobs(ctx, { count: 10, leaseMs: 10_000, claimantPrefix: 'w', promoteLimit: 2 });
    expect(batch.jobs).toHaveLength(2);
    expect(await redis.zcard(ctx.keys.schedule)).toBe(1);
  });

  it('claims nothing from a paused queue, and resumes when the flag goes', async () => {
    const ctx = context();
    const ids = await enqueue(ctx, 2);
    await redis.set(ctx.keys.paused, '1');
    const paused = await claimJobs(ctx, { count: 10, leaseMs: 10_000, claimantPrefix: 'w' });
    expect(paused.jobs).toEqual([]);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.sets.pending)).toEqual(ids);
    expect(snap.sets.active).toEqual({});
    expect(snap.rows[ids[0]].a).toBeUndefined();
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 2 });

    await redis.del(ctx.keys.paused);
    const resumed = await claimJobs(ctx, { count: 10, leaseMs: 10_000, claimantPrefix: 'w2' });
    expect(resumed.jobs.map((j) => j.id)).toEqual(ids);
  });

  it('passes the wake token on when work is left, and not when pending is empty', async () => {
    const ctx = context();
    await enqueue(ctx, 3);
    await redis.del(ctx.keys.wake);
    await claimJobs(ctx, { count: 1, leaseMs: 10_000, claimantPrefix: 'w' });
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
    await redis.del(ctx.keys.wake);
    await claimJobs(ctx, { count: 5, leaseMs: 10_000, claimantPrefix: 'w2' });
    expect(await redis.llen(ctx.keys.wake)).toBe(0);
  });

  it('drops a pending member that has no row instead of handing out an empty job', async () => {
    const ctx = context();
    const orphan = mint();
    const [real] = await enqueue(ctx, 1);
    await redis.zadd(ctx.keys.pending, 0, orphan);
    const batch = await claimJobs(ctx, { count: 5, leaseMs: 10_000, claimantPrefix: 'w' });
    expect(batch.jobs.map((j) => j.id)).toEqual([real]);
    await expectConsistent(redis, ctx.keys);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ orphans: 1, claimed: 1 });
  });

  it('on an empty queue claims nothing, emits nothing, and reports no next run-at', async () => {
    const ctx = context();
    const batch = await claimJobs(ctx, { count: 5, leaseMs: 10_000, claimantPrefix: 'w' });
    expect(batch.jobs).toEqual([]);
    expect(batch.nextRunAt).toBeNull();
    expect(await redis.exists(ctx.keys.metrics, ctx.keys.events, ctx.keys.active)).toBe(0);
  });
});
