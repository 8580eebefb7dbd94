import type { Redis } from 'ioredis';
import {
  DEAD_TRIM_MAX,
  JOB_IDS,
  SnowflakeMinter,
  claimJobs,
  enqueueJobs,
  failJob,
  reapExpired,
  type ClaimedJobRecord,
  type DeadRetention,
  type ScriptContext,
} from '@app/echomq/internal';
import { backdate, events, expectConsistent, jobRecord, metrics, serverNowMs } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

const DAY_MS = 86_400_000;

/** The dead set trimmed by the transitions that insert into it (fail, reap), never by a sweeper. */
describe('retention: dead trimmed on insert, oldest first', () => {
  let redis: Redis;
  const mint = idMinter(23);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  /** A fresh queue with these ids enqueued (each with an idempotency key, one attempt) and claimed. */
  async function claimed(ids: string[]): Promise<{ ctx: ScriptContext; jobs: ClaimedJobRecord[] }> {
    const ctx = scriptContext(redis, uniqueQueue('dead-trim'));
    for (let at = 0; at < ids.length; at += 500) {
      const slice = ids.slice(at, at + 500);
      await enqueueJobs(
        ctx,
        slice.map((id) => jobRecord(id, { maxAttempts: 1, idempotencyKey: `k-${id}` })),
        60_000,
      );
    }
    const jobs: ClaimedJobRecord[] = [];
    while (jobs.length < ids.length) {
      const claim = await claimJobs(ctx, { count: 500, leaseMs: 60_000, claimantPrefix: 'w' });
      jobs.push(...claim.jobs);
    }
    return { ctx, jobs };
  }

  const toDead = (ctx: ScriptContext, job: ClaimedJobRecord, dead?: DeadRetention) =>
    failJob(ctx, job, { error: 'boom', backoffMs: 0, unrecoverable: false, dead });

  const deadIds = async (ctx: ScriptContext): Promise<string[]> => redis.zrange(ctx.keys.dead, 0, -1);
  const trimmedEvents = async (ctx: ScriptContext): Promise<string[][]> =>
    (await events(redis, ctx.keys))
      .filter((event) => event.fields.type === 'trimmed')
      .map((event) => event.fields.ids.split(','));
  const idemKeysLeft = async (ctx: ScriptContext, ids: string[]): Promise<number> =>
    Number(await redis.exists(...ids.map((id) => `${ctx.keys.idempotencyPrefix}k-${id}`)));

  it('fail keeps deadMaxJobs, deleting the oldest rows and their idempotency keys', async () => {
    const ids = Array.from({ length: 5 }, () => mint());
    const { ctx, jobs } = await claimed(ids);
    for (const job of jobs) {
      expect(await toDead(ctx, job, { deadMaxJobs: 3, deadMaxAgeMs: null })).toEqual({ state: 'dead' });
    }
    expect(await deadIds(ctx)).toEqual(ids.slice(2));
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.rows).sort()).toEqual(ids.slice(2));
    expect(await idemKeysLeft(ctx, ids.slice(0, 2))).toBe(0);
    expect(await idemKeysLeft(ctx, ids.slice(2))).toBe(3);
    expect(await trimmedEvents(ctx)).toEqual([[ids[0]], [ids[1]]]);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ dead: 5, trimmed: 2 });
    // The 'dead' entry of the job comes first, then what its insert trimmed.
    const types = (await events(redis, ctx.keys)).map((event) => event.fields.type);
    expect(types.slice(-2)).toEqual(['dead', 'trimmed']);
  });

  it('reap keeps deadMaxJobs too, trimming in the call that moves the expired leases', async () => {
    const ids = Array.from({ length: 6 }, () => mint());
    const { ctx, jobs } = await claimed(ids);
    for (const job of jobs) await backdate(redis, ctx.keys.active, job.id);
    expect(await reapExpired(ctx, 100, { deadMaxJobs: 2, deadMaxAgeMs: null })).toEqual({
      toPending: 0,
      toDead: 6,
      more: false,
    });
    expect(await deadIds(ctx)).toEqual(ids.slice(4));
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.rows).sort()).toEqual(ids.slice(4));
    expect(await idemKeysLeft(ctx, ids.slice(0, 4))).toBe(0);
    expect(await trimmedEvents(ctx)).toEqual([ids.slice(0, 4)]);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ dead: 6, trimmed: 4 });
  });

  it('trims jobs enqueued longer ago than deadMaxAgeMs (the id’s time), whatever the count', async () => {
    const now = await serverNowMs(redis);
    // Ids minted as if 10 and 3 days ago, and now: the id's time is the enqueue time.
    const tenDays = JOB_IDS.minter(new SnowflakeMinter(5, () => now - 10 * DAY_MS));
    const threeDays = JOB_IDS.minter(new SnowflakeMinter(5, () => now - 3 * DAY_MS));
    const ids = [tenDays(), tenDays(), threeDays(), mint(), mint()];
    const { ctx, jobs } = await claimed(ids);
    const retention = { deadMaxJobs: 10_000, deadMaxAgeMs: 7 * DAY_MS };
    await toDead(ctx, jobs[0], retention); // itself 10 days old: in and out in one call
    expect(await deadIds(ctx)).toEqual([]);
    await toDead(ctx, jobs[2], retention);
    await toDead(ctx, jobs[3], retention);
    expect(await deadIds(ctx)).toEqual([ids[2], ids[3]]);
    // A shorter age limit, as a later process might apply: the 3-day-old job goes on the next insert.
    await toDead(ctx, jobs[4], { deadMaxJobs: 10_000, deadMaxAgeMs: DAY_MS });
    expect(await deadIds(ctx)).toEqual([ids[3], ids[4]]);
    expect(await trimmedEvents(ctx)).toEqual([[ids[0]], [ids[2]]]);
    await expectConsistent(redis, ctx.keys);
    // The job still in active (ids[1]) was never touched.
    expect(await redis.zscore(ctx.keys.active, ids[1])).not.toBeNull();
  });

  it('trims at most DEAD_TRIM_MAX beyond what it inserts per call, so a lowered cap converges over a few inserts', async () => {
    const ids = Array.from({ length: 253 }, () => mint());
    const { ctx, jobs } = await claimed(ids);
    // 250 jobs into dead under the default cap (10,000): nothing trimmed.
    for (const job of jobs.slice(0, 250)) await backdate(redis, ctx.keys.active, job.id);
    expect((await reapExpired(ctx, 500)).toDead).toBe(250);
    expect(await redis.zcard(ctx.keys.dead)).toBe(250);

    const lowered = { deadMaxJobs: 10, deadMaxAgeMs: null };
    const sizes: number[] = [];
    for (const job of jobs.slice(250)) {
      await toDead(ctx, job, lowered);
      sizes.push(await redis.zcard(ctx.keys.dead));
    }
    // 251 - 101 = 150, then 151 - 101 = 50, then 51 - 41 = 10.
    expect(DEAD_TRIM_MAX).toBe(100);
    expect(sizes).toEqual([150, 50, 10]);
    expect((await trimmedEvents(ctx)).map((trimmed) => trimmed.length)).toEqual([101, 101, 41]);
    expect(await deadIds(ctx)).toEqual(ids.slice(243));
    await expectConsistent(redis, ctx.keys);
  });

  it('a reap of many jobs into a full dead set trims as many as it inserts: the cap holds', async () => {
    const ids = Array.from({ length: 300 }, () => mint());
    const { ctx, jobs } = await claimed(ids);
    for (const job of jobs) await backdate(redis, ctx.keys.active, job.id);
    expect((await reapExpired(ctx, 500, { deadMaxJobs: 20, deadMaxAgeMs: null })).toDead).toBe(300);
    expect(await deadIds(ctx)).toEqual(ids.slice(280));
    expect(await metrics(redis, ctx.keys)).toMatchObject({ trimmed: 280 });
  });

  it('a repeated fail request returns its first reply and trims nothing more', async () => {
    const ids = Array.from({ length: 3 }, () => mint());
    const { ctx, jobs } = await claimed(ids);
    const keep1 = { deadMaxJobs: 1, deadMaxAgeMs: null };
    await toDead(ctx, jobs[0], keep1);
    const request = { error: 'boom', backoffMs: 0, unrecoverable: false, dead: keep1 };
    expect(await failJob(ctx, jobs[1], request, 'req-1')).toEqual({ state: 'dead' });
    expect(await failJob(ctx, jobs[1], request, 'req-1')).toEqual({ state: 'dead' });
    expect(await deadIds(ctx)).toEqual([ids[1]]);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ dead: 2, trimmed: 1 });
  });

  it('refuses limits outside their ranges before writing anything', async () => {
    const { ctx, jobs } = await claimed([mint()]);
    const before = await redis.hgetall(ctx.keys.job(jobs[0].id));
    await expect(toDead(ctx, jobs[0], { deadMaxJobs: -1, deadMaxAgeMs: null })).rejects.toThrow(
      /EMQ_BAD_ARG/,
    );
    expect(await redis.hgetall(ctx.keys.job(jobs[0].id))).toEqual(before);
    expect(await redis.zscore(ctx.keys.active, jobs[0].id)).not.toBeNull();
  });
});
