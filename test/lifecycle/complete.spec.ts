import {
  completeJobs,
  StaleJobError,
  completeJob,
  readJobView,
  type ClaimedJobRecord,
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
  serverNowMs,
  staleScenario,
  untouchable,
} from '../support/assertions';
import { enqueueAndClaim } from '../support/claims';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { claimUpTo, enqueueIn, expectFlowConsistent } from './support/flow';

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
  describe('with lanes', () => {
    it.each([0, 60_000])(
      'counts the job out of its lane (keep %p ms): a lane its cap held back returns, a worker wakes',
      async (keepMs) => {
        const ctx = scriptContext(redis, uniqueQueue('complete-lanes'));
        await writeLimits(ctx, { laneConcurrency: 1 });
        const [first, second] = await enqueueIn(ctx, mint, [
          ['acme', 2],
          ['acme', 2],
        ]);
        const [job] = await claimUpTo(ctx, 5);
        expect(job.id).toBe(first);
        expect((await expectFlowConsistent(redis, ctx.keys)).held).toEqual({ acme: '2' });
        await redis.del(ctx.keys.wake);

        await completeJob(ctx, job, '', keepMs);
        const flow = await expectFlowConsistent(redis, ctx.keys);
        expect(flow.laneActive).toEqual({});
        expect(flow.held).toEqual({});
        expect(Object.keys(flow.ready[2] ?? {})).toEqual(['acme']);
        expect(await redis.llen(ctx.keys.wake)).toBe(1);
        expect((await claimUpTo(ctx, 5)).map((next) => next.id)).toEqual([second]);
      },
    );

    it('a worker the global cap turned away is woken when a job completes', async () => {
      const ctx = scriptContext(redis, uniqueQueue('complete-gc'));
      await writeLimits(ctx, { globalConcurrency: 1 });
      await enqueueIn(ctx, mint, [
        ['default', 0],
        ['default', 0],
      ]);
      const [job] = await claimUpTo(ctx, 5);
      expect(await claimUpTo(ctx, 5)).toEqual([]);
      await redis.del(ctx.keys.wake);
      await completeJob(ctx, job, '', 0);
      expect(await redis.exists(ctx.keys.waiting)).toBe(0);
      expect(await redis.llen(ctx.keys.wake)).toBe(1);
    });

    it('a batch over several lanes counts each lane out by its own jobs', async () => {
      const ctx = scriptContext(redis, uniqueQueue('complete-batch'));
      await enqueueIn(ctx, mint, [
        ['acme', 0],
        ['acme', 0],
        ['globex', 1],
      ]);
      const jobs = await claimUpTo(ctx, 5);
      expect((await expectFlowConsistent(redis, ctx.keys)).laneActive).toEqual({ acme: 2, globex: 1 });
      const acme = jobs.filter((job) => job.lane === 'acme');
      await completeJobs(
        ctx,
        [...acme, jobs.find((job) => job.lane === 'globex')!].map((claim) => ({ claim, result: '' })),
        0,
      );
      expect((await expectFlowConsistent(redis, ctx.keys)).laneActive).toEqual({});
    });
  });
});
