import {
  InvalidArgumentError,
  InvalidJobIdError,
  StaleJobError,
  claimJobs as claimBatch,
  failJob,
  readJobView,
  throttleJob,
  toJobView,
  type ClaimRef,
  type JobId,
  type ScriptContext,
  writeLimits,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import {
  STALE_KINDS,
  backdate,
  events,
  expectConsistent,
  jobRecord,
  metrics,
  serverNowMs,
  staleScenario,
  untouchable,
} from '../support/assertions';
import { enqueueAndClaim } from '../support/claims';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { at, claimUpTo, enqueueIn, expectFlowConsistent } from './support/flow';

describe('throttle: active -> pending without spending the attempt, holding the queue or the lane back', () => {
  let redis: Redis;
  const mint = idMinter(61);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function context(): ScriptContext {
    return scriptContext(redis, uniqueQueue('throttle'));
  }

  it('puts the job back in pending with its attempt unspent, drops the claimant, counts it and says so', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'throttle', [jobRecord(mint(), { maxAttempts: 1 })]);
    const [job] = jobs;
    await throttleJob(ctx, job, 5_000, 'queue');

    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.active).toEqual({});
    expect(snap.sets.pending).toEqual({ [job.id]: 0 });
    expect(snap.rows[job.id]).toMatchObject({ a: '1', b: '1' });
    expect(snap.rows[job.id].c).toBeUndefined();
    // The only attempt of its budget is still there to spend.
    const view = toJobView(ctx.keys.queue, job.id as JobId, await readJobView(ctx, job.id));
    expect(view).toMatchObject({ state: 'pending', attempts: 1, maxAttempts: 1, attemptsLeft: 1 });
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 1, claimed: 1, throttled: 1 });
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({
      type: 'throttled',
      ids: job.id,
      attempt: '1',
      ms: '5000',
      scope: 'queue',
    });
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('scope queue: holds the whole queue, so a claim gets nothing and is told when to come back', async () => {
    const ctx = context();
    const [first, other] = await enqueueIn(ctx, mint, [
      ['default', 0],
      ['acme', 0],
    ]);
    const [job] = await claimUpTo(ctx, 1);
    await throttleJob(ctx, job, 60_000, 'queue');

    const hold = await redis.pttl(ctx.keys.hold);
    expect(hold).toBeGreaterThan(0);
    expect(hold).toBeLessThanOrEqual(60_000);
    const before = await serverNowMs(redis);
    const batch = await claimBatch(ctx, { count: 5, leaseMs: 30_000, claimantPrefix: 'after-hold' });
    expect(batch.jobs).toEqual([]);
    expect(batch.limitedUntil).toBeGreaterThan(before);
    expect(batch.limitedUntil).toBeLessThanOrEqual(before + 60_000 + 5);
    // Both jobs wait in their lanes, none lost.
    const flow = await expectFlowConsistent(redis, ctx.keys);
    expect(flow.pending).toEqual({ [at('default')]: [first], [at('acme')]: [other] });
  });

  it('scope queue: a longer hold already in force stays', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'throttle', [jobRecord(mint())]);
    await redis.set(ctx.keys.hold, '1', 'PX', 600_000);
    await throttleJob(ctx, jobs[0], 1_000, 'queue');
    expect(await redis.pttl(ctx.keys.hold)).toBeGreaterThan(1_000);
  });

  it("scope lane: holds only the job's lane (a hold until now + ms), other lanes are claimed on", async () => {
    const ctx = context();
    const [limited, again, free] = await enqueueIn(ctx, mint, [
      ['acme', 3],
      ['acme', 3],
      ['globex', 0],
    ]);
    const [job] = await claimUpTo(ctx, 1);
    expect(job).toMatchObject({ id: limited, lane: 'acme', priority: 3 });
    const before = await serverNowMs(redis);
    await throttleJob(ctx, job, 30_000, 'lane');
    const after = await serverNowMs(redis);

    const flow = await expectFlowConsistent(redis, ctx.keys);
    // Back at the head of its own lane and level (mint order), the lane held at that level.
    expect(flow.pending[at('acme', 3)]).toEqual([limited, again]);
    expect(flow.held).toEqual({ acme: '3' });
    expect(flow.holds.acme).toBeGreaterThanOrEqual(before + 30_000);
    expect(flow.holds.acme).toBeLessThanOrEqual(after + 30_000);
    expect(flow.laneActive).toEqual({});
    expect(await redis.exists(ctx.keys.hold)).toBe(0);

    const next = await claimUpTo(ctx, 5);
    expect(next.map((claimed) => claimed.id)).toEqual([free]);
    expect((await events(redis, ctx.keys)).find((e) => e.fields.type === 'throttled')?.fields).toMatchObject({
      scope: 'lane',
      ms: '30000',
    });
  });

  it('scope lane: a later timer already set stays (the later of the two wins)', async () => {
    const ctx = context();
    await enqueueIn(ctx, mint, [['acme', 0]]);
    const [job] = await claimUpTo(ctx, 1);
    const far = (await serverNowMs(redis)) + 3_600_000;
    await redis.zadd(ctx.keys.laneHolds, far, 'acme');
    await throttleJob(ctx, job, 1_000, 'lane');
    expect(Number(await redis.zscore(ctx.keys.laneHolds, 'acme'))).toBe(far);
    await expectFlowConsistent(redis, ctx.keys);
  });

  it("frees the lane's slot: a lane its cap held back returns, and the waiting worker is woken", async () => {
    const ctx = context();
    await writeLimits(ctx, { laneConcurrency: 1 });
    const [first, second] = await enqueueIn(ctx, mint, [
      ['acme', 0],
      ['acme', 0],
    ]);
    const [job] = await claimUpTo(ctx, 1);
    expect(await claimUpTo(ctx, 1)).toEqual([]); // at its cap: acme is held
    expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '0' });
    await redis.del(ctx.keys.wake);

    // Scope queue holds the queue, not the lane: the lane itself returns to ready.
    await throttleJob(ctx, job, 1_000, 'queue');
    const flow = await expectFlowConsistent(redis, ctx.keys);
    expect(flow.held).toEqual({});
    expect(Object.keys(flow.ready[0] ?? {})).toEqual(['acme']);
    expect(flow.pending[at('acme')]).toEqual([first, second]);
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
  });

  it('does not spend the budget however often it happens: only a real failure does', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'throttle', [jobRecord(mint(), { maxAttempts: 1 })]);
    let claim: ClaimRef = jobs[0];
    for (let i = 0; i < 3; i++) {
      await throttleJob(ctx, claim, 60_000, 'lane');
      await backdate(redis, ctx.keys.laneHolds, 'default'); // the hold has passed
      [claim] = await claimUpTo(ctx, 1);
    }
    expect(claim.attempt).toBe(4);
    expect(await failJob(ctx, claim, { error: 'real', backoffMs: 0, unrecoverable: false })).toEqual({
      state: 'dead',
    });
  });

  it('a repeat of the same request changes nothing more and answers as the first did', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'throttle', [jobRecord(mint())]);
    await throttleJob(ctx, jobs[0], 1_000, 'queue', 'req-1');
    const before = await untouchable(redis, ctx.keys);
    await throttleJob(ctx, jobs[0], 1_000, 'queue', 'req-1');
    expect(await untouchable(redis, ctx.keys)).toEqual(before);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ throttled: 1 });
    expect(await redis.hget(ctx.keys.job(jobs[0].id), 'b')).toBe('1');
  });

  it('a repeat of a stale request reports STALE again', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'throttle', [jobRecord(mint())]);
    const stale = { ...jobs[0], attempt: 9 };
    await expect(throttleJob(ctx, stale, 1_000, 'queue', 'req-s')).rejects.toBeInstanceOf(StaleJobError);
    await expect(throttleJob(ctx, jobs[0], 1_000, 'queue', 'req-s')).rejects.toBeInstanceOf(StaleJobError);
    expect(await redis.zscore(ctx.keys.active, jobs[0].id)).not.toBeNull();
  });

  describe('a stale claim changes nothing and reports STALE', () => {
    it.each(STALE_KINDS)('%s', async (kind) => {
      const ctx = scriptContext(redis, uniqueQueue('throttle-stale'));
      const id = mint();
      const stale = await staleScenario(redis, ctx, id, kind);
      const before = await untouchable(redis, ctx.keys);
      const flowBefore = await expectFlowConsistent(redis, ctx.keys);
      const staleCount = (await metrics(redis, ctx.keys)).stale ?? 0;

      for (const scope of ['queue', 'lane'] as const) {
        const error = await throttleJob(ctx, stale, 1_000, scope).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(StaleJobError);
        expect(error).toMatchObject({ id, attempt: stale.attempt });
      }

      expect(await untouchable(redis, ctx.keys)).toEqual(before);
      expect(await expectFlowConsistent(redis, ctx.keys)).toEqual(flowBefore);
      expect(await redis.exists(ctx.keys.hold)).toBe(0);
      expect((await metrics(redis, ctx.keys)).stale).toBe(staleCount + 2);
      expect((await metrics(redis, ctx.keys)).throttled).toBeUndefined();
    });
  });

  describe('bad input throws before anything is sent', () => {
    const claim = { id: 'JOB0000000000A', attempt: 1, claimant: 'w.0' };
    it.each([0, -1, 1.5, 86_400_001, Number.NaN])('holdMs %p', async (holdMs) => {
      const ctx = context();
      await expect(throttleJob(ctx, claim, holdMs, 'queue')).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await redis.exists(ctx.keys.metrics)).toBe(0);
    });

    it('a scope other than queue or lane', async () => {
      const ctx = context();
      await expect(throttleJob(ctx, claim, 1_000, 'tenant' as 'lane')).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      expect(await redis.exists(ctx.keys.metrics)).toBe(0);
    });

    it('a malformed id', async () => {
      const ctx = context();
      await expect(throttleJob(ctx, { ...claim, id: 'nope' }, 1_000, 'queue')).rejects.toBeInstanceOf(
        InvalidJobIdError,
      );
    });

    it('the script itself refuses a bad hold or scope before writing', async () => {
      const { ctx, jobs } = await enqueueAndClaim(redis, 'throttle', [jobRecord(mint())]);
      const before = await untouchable(redis, ctx.keys);
      const { keys } = ctx;
      const send = (ms: string, scope: string) =>
        ctx.redis
          .emqThrottle(
            keys.fence,
            keys.reply(`bad-${ms}-${scope}`),
            keys.active,
            keys.metrics,
            keys.events,
            keys.wake,
            keys.job(jobs[0].id),
            jobs[0].id,
            jobs[0].attempt,
            jobs[0].claimant,
            ms,
            scope,
            1000,
            60_000,
          )
          .catch((e: unknown) => e);
      expect(String(await send('0', 'queue'))).toMatch(/EMQ_BAD_ARG/);
      expect(String(await send('1000', 'tenant'))).toMatch(/EMQ_BAD_ARG/);
      expect(await untouchable(redis, ctx.keys)).toEqual(before);
    });
  });
});
