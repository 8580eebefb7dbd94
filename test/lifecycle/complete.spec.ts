import {
  StaleJobError,
  completeJob,
  readJobView,
  type ClaimedJobRecord,
  type ScriptContext,
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
import { enqueueAndClaim } from '../support/claims';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

describe('complete: active -> completed', () => {
  let redis: Redis;
  const mint = idMinter(13);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function claimed(): Promise<{ ctx: ScriptContext; job: ClaimedJobRecord }> {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'complete', [jobRecord(mint(), { data: '{"n":1}' })]);
    return { ctx, job: jobs[0] };
  }

  it('without retention: removes the id from active and deletes the row', async () => {
    const { ctx, job } = await claimed();
    await completeJob(ctx, job, '"ok"', 0);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets).toEqual({ pending: {}, active: {}, schedule: {}, dead: {} });
    expect(snap.rows).toEqual({});
    expect((await readJobView(ctx, job.id)).state).toBe('unknown');
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 1, claimed: 1, completed: 1 });
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({
      type: 'completed',
      ids: job.id,
      results: '["ok"]',
    });
  });

  it('with retention: keeps the row in no set, with the result, finish time and a TTL', async () => {
    const { ctx, job } = await claimed();
    const before = await serverNowMs(redis);
    await completeJob(ctx, job, '{"sent":true}', 120_000);
    const after = await serverNowMs(redis);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets).toEqual({ pending: {}, active: {}, schedule: {}, dead: {} });
    const row = snap.rows[job.id];
    expect(row).toMatchObject({ d: '{"n":1}', a: '1', r: '{"sent":true}' });
    expect(row.c).toBeUndefined();
    expect(Number(row.f)).toBeGreaterThanOrEqual(before);
    expect(Number(row.f)).toBeLessThanOrEqual(after);
    const ttl = await redis.pttl(ctx.keys.job(job.id));
    expect(ttl).toBeGreaterThan(100_000);
    expect(ttl).toBeLessThanOrEqual(120_000);
    const view = await readJobView(ctx, job.id);
    expect(view.state).toBe('completed');
    expect(view.score).toBeNull();
  });

  it('a second complete of the same claim is stale and changes nothing', async () => {
    const { ctx, job } = await claimed();
    await completeJob(ctx, job, '1', 60_000);
    const before = await untouchable(redis, ctx.keys);
    const ttlBefore = await redis.pttl(ctx.keys.job(job.id));
    await expect(completeJob(ctx, job, '2', 600_000)).rejects.toBeInstanceOf(StaleJobError);
    expect(await untouchable(redis, ctx.keys)).toEqual(before);
    expect(await redis.pttl(ctx.keys.job(job.id))).toBeLessThanOrEqual(ttlBefore);
    expect(await redis.hget(ctx.keys.job(job.id), 'r')).toBe('1');
  });

  describe('a stale claim changes nothing and reports STALE', () => {
    it.each(STALE_KINDS)('%s', async (kind) => {
      const ctx = scriptContext(redis, uniqueQueue('complete-stale'));
      const id = mint();
      const stale = await staleScenario(redis, ctx, id, kind);
      const before = await untouchable(redis, ctx.keys);
      const staleCount = (await metrics(redis, ctx.keys)).stale ?? 0;

      const error = await completeJob(ctx, stale, '"late"', 60_000).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StaleJobError);
      expect(error).toMatchObject({ code: 'STALE', id, attempt: stale.attempt });

      expect(await untouchable(redis, ctx.keys)).toEqual(before);
      expect((await metrics(redis, ctx.keys)).stale).toBe(staleCount + 1);
      await expectConsistent(redis, ctx.keys);
    });
  });
});
