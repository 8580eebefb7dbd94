/**
 * Batch bounds and all-or-nothing (issue 8, items 1 and 3): no script fails after its first
 * write, every call moves at most SCRIPT_BATCH_MAX jobs, long lists reach Redis in slices,
 * and one caller's clash in a merged enqueue fails only that caller.
 */
import {
  claimJobs,
  enqueueGroups,
  enqueueJobs,
  InvalidArgumentError,
  JobExistsError,
  promoteDue,
  readJobView,
  reapExpired,
  ENQUEUE_MANY_MAX,
  SCRIPT_BATCH_MAX,
  type ScriptContext,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { expectConsistent, jobRecord, metrics, serverNowMs } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

describe('batch bounds: every call moves a bounded number of jobs, all or nothing', () => {
  let redis: Redis;
  const mint = idMinter(21);
  const TTL = 60_000;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function context(): ScriptContext {
    return scriptContext(redis, uniqueQueue('bounds'));
  }

  async function enqueueN(ctx: ScriptContext, n: number, overrides = {}): Promise<string[]> {
    const ids: string[] = [];
    for (let from = 0; from < n; from += SCRIPT_BATCH_MAX) {
      const records = Array.from({ length: Math.min(SCRIPT_BATCH_MAX, n - from) }, () =>
        jobRecord(mint(), overrides),
      );
      ids.push(...(await enqueueJobs(ctx, records, TTL)).map((outcome) => outcome.id));
    }
    return ids;
  }

  async function keyCount(ctx: ScriptContext): Promise<number> {
    return (await redis.keys(`${ctx.keys.base}*`)).length;
  }

  it('enqueues the documented maximum in one call, and refuses one more before sending anything', async () => {
    const ctx = context();
    const records = Array.from({ length: ENQUEUE_MANY_MAX }, () => jobRecord(mint()));
    const ids = (await enqueueJobs(ctx, records, TTL)).map((outcome) => outcome.id);
    expect(await redis.zcard(ctx.keys.pending)).toBe(ENQUEUE_MANY_MAX);
    await expectConsistent(redis, ctx.keys);

    const before = await keyCount(ctx);
    const tooMany = Array.from({ length: ENQUEUE_MANY_MAX + 1 }, () => jobRecord(mint()));
    await expect(enqueueJobs(ctx, tooMany, TTL)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await keyCount(ctx)).toBe(before);
    expect(ids).toHaveLength(ENQUEUE_MANY_MAX);
  });

  it('claims the maximum in one call (past Lua unpack limits) with every claimed job in active and nowhere else', async () => {
    const ctx = context();
    const ids = await enqueueN(ctx, SCRIPT_BATCH_MAX + 5);
    const batch = await claimJobs(ctx, { count: SCRIPT_BATCH_MAX, leaseMs: 60_000, claimantPrefix: 'big' });
    expect(batch.jobs.map((job) => job.id)).toEqual(ids.slice(0, SCRIPT_BATCH_MAX));
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.sets.active)).toHaveLength(SCRIPT_BATCH_MAX);
    expect(Object.keys(snap.sets.pending)).toEqual(ids.slice(SCRIPT_BATCH_MAX));
  });

  it('refuses a claim larger than the maximum without touching the queue', async () => {
    const ctx = context();
    await enqueueN(ctx, 3);
    await expect(
      claimJobs(ctx, { count: SCRIPT_BATCH_MAX + 1, leaseMs: 60_000, claimantPrefix: 'huge' }),
    ).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await redis.zcard(ctx.keys.pending)).toBe(3);
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 3 });
  });

  it('a script refuses out-of-range arguments before its first write (called directly, past the wrapper)', async () => {
    const ctx = context();
    await enqueueN(ctx, 3);
    const before = await keyCount(ctx);
    // Past the wrapper's own checks: the claim script itself, with its documented arguments.
    const rawClaim = (requestId: string, count: number, eventsMaxLen: number | string, maxAttempts = 3) => {
      const k = ctx.keys;
      const keys = [
        k.fence,
        k.reply(requestId),
        k.pending,
        k.active,
        k.schedule,
        k.metrics,
        k.events,
        k.wake,
        k.paused,
      ];
      return ctx.redis.emqClaim(
        ...keys,
        k.jobPrefix,
        count,
        60_000,
        requestId,
        eventsMaxLen,
        10,
        60_000,
        maxAttempts,
      );
    };
    // count 5,000 would once have popped and written before unpack() failed.
    await expect(rawClaim('direct', 5_000, 1000)).rejects.toThrow(/EMQ_BAD_ARG/);
    // a non-integer events max length is refused too, not met at the end after the writes
    await expect(rawClaim('direct2', 2, '12.5')).rejects.toThrow(/EMQ_BAD_ARG/);
    // and so is a worker budget outside 1 .. 1,000,000, which claimed rows would record
    await expect(rawClaim('direct3', 2, 1000, 0)).rejects.toThrow(/EMQ_BAD_ARG/);
    expect(await keyCount(ctx)).toBe(before);
    expect(await redis.zcard(ctx.keys.pending)).toBe(3);
  });

  it('promotes at most the limit per call and never leaves a job in both schedule and pending', async () => {
    const ctx = context();
    const ids = await enqueueN(ctx, 2 * SCRIPT_BATCH_MAX + 10, { delayMs: 60_000 });
    // make every job due: rewrite its run-at into the past (the server clock stays the only clock)
    const past = (await serverNowMs(redis)) - 1_000;
    for (let i = 0; i < ids.length; i += 500) {
      await redis.zadd(ctx.keys.schedule, ...ids.slice(i, i + 500).flatMap((id) => [past, id]));
    }
    const first = await promoteDue(ctx, SCRIPT_BATCH_MAX);
    expect(first).toEqual({ promoted: SCRIPT_BATCH_MAX, more: true });
    await expectConsistent(redis, ctx.keys);
    const second = await promoteDue(ctx, SCRIPT_BATCH_MAX);
    const third = await promoteDue(ctx, SCRIPT_BATCH_MAX);
    expect(second.promoted + third.promoted).toBe(SCRIPT_BATCH_MAX + 10);
    expect(third.more).toBe(false);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.sets.pending)).toHaveLength(ids.length);
    await expect(promoteDue(ctx, SCRIPT_BATCH_MAX + 1)).rejects.toThrow(
      /EMQ_BAD_ARG|InvalidArgument|refused/,
    );
    await expect(reapExpired(ctx, 0)).rejects.toThrow(/EMQ_BAD_ARG|InvalidArgument|refused/);
  });

  it('one caller whose id exists is refused alone; the callers merged with it are enqueued', async () => {
    const ctx = context();
    const [taken] = await enqueueN(ctx, 1);
    const before = mint();
    const after = [mint(), mint()];
    const outcomes = await enqueueGroups(
      ctx,
      [[jobRecord(before)], [jobRecord(mint()), jobRecord(taken)], after.map((id) => jobRecord(id))],
      TTL,
    );
    expect(outcomes[0]).toEqual([{ id: before, created: true }]);
    expect(outcomes[1]).toBeInstanceOf(JobExistsError);
    expect(outcomes[2]).toEqual(after.map((id) => ({ id, created: true })));
    const snap = await expectConsistent(redis, ctx.keys);
    // the refused caller's other job was not written: its group is all or nothing
    expect(Object.keys(snap.sets.pending).sort()).toEqual([taken, before, ...after].sort());
  });

  it('an idempotency key bound by a refused caller does not bind the callers after it', async () => {
    const ctx = context();
    const [taken] = await enqueueN(ctx, 1);
    const later = mint();
    const outcomes = await enqueueGroups(
      ctx,
      [
        [jobRecord(mint(), { idempotencyKey: 'k' }), jobRecord(taken)],
        [jobRecord(later, { idempotencyKey: 'k' })],
      ],
      TTL,
    );
    expect(outcomes[0]).toBeInstanceOf(JobExistsError);
    expect(outcomes[1]).toEqual([{ id: later, created: true }]);
    expect(await redis.get(ctx.keys.idempotency('k'))).toBe(later);
  });

  it('a row in no set counts as completed only when it says it finished', async () => {
    const ctx = context();
    const orphan = mint();
    await redis.hset(ctx.keys.job(orphan), 'd', '{}', 'm', '3');
    expect((await readJobView(ctx, orphan)).state).toBe('orphan');
    await redis.hset(ctx.keys.job(orphan), 'f', String(Date.now()));
    expect((await readJobView(ctx, orphan)).state).toBe('completed');
  });

  it('repeating a write call with its request id returns the first outcome and changes nothing', async () => {
    const ctx = context();
    const records = [jobRecord(mint()), jobRecord(mint())];
    const first = await enqueueJobs(ctx, records, TTL, 'req-1');
    const again = await enqueueJobs(ctx, records, TTL, 'req-1');
    expect(again).toEqual(first);
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 2 });

    const claim = await claimJobs(ctx, { count: 5, leaseMs: 60_000, claimantPrefix: 'claim-1' });
    const repeated = await claimJobs(ctx, { count: 5, leaseMs: 60_000, claimantPrefix: 'claim-1' });
    expect(repeated.jobs).toEqual(claim.jobs);
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 2, claimed: 2 });
  });
});
