import {
  InvalidJobIdError,
  claimJobs,
  completeJob,
  enqueueJobs,
  failJob,
  readJobView,
  readJobViews,
  toJobView,
  type JobId,
  type ScriptContext,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { jobRecord, serverNowMs } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { claimUpTo, enqueueIn } from './support/flow';

describe('job view: the state is the set that holds the id', () => {
  let redis: Redis;
  const mint = idMinter(21);
  let ctx: ScriptContext;
  const ids = { pending: '', active: '', schedule: '', dead: '', completed: '', gone: '' };
  let runAt = 0;
  let deadline = 0;

  beforeAll(async () => {
    redis = connect();
    ctx = scriptContext(redis, uniqueQueue('view'));
    // Minted in claim order: the first four claimed are active, dead, completed, gone.
    for (const key of ['active', 'dead', 'completed', 'gone', 'pending', 'schedule'] as const)
      ids[key] = mint();
    runAt = (await serverNowMs(redis)) + 3_600_000;
    await enqueueJobs(
      ctx,
      [
        jobRecord(ids.active, { data: '{"who":"active"}', name: 'a-name' }),
        jobRecord(ids.dead, { maxAttempts: 1 }),
        jobRecord(ids.completed),
        jobRecord(ids.gone),
        jobRecord(ids.pending, { data: '[1,2,3]' }),
        jobRecord(ids.schedule, { runAtMs: runAt }),
      ],
      60_000,
    );
    const batch = await claimJobs(ctx, { count: 4, leaseMs: 30_000, claimantPrefix: 'w' });
    const byId = new Map(batch.jobs.map((job) => [job.id, job]));
    deadline = batch.leaseDeadline;
    await failJob(ctx, byId.get(ids.dead)!, { error: 'fatal', backoffMs: 0, unrecoverable: false });
    await completeJob(ctx, byId.get(ids.completed)!, '{"ok":1}', 60_000);
    await completeJob(ctx, byId.get(ids.gone)!, '', 0);
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('pending: score 0 and the row', async () => {
    expect(await readJobView(ctx, ids.pending)).toEqual({
      state: 'pending',
      score: 0,
      fields: { d: '[1,2,3]', m: '3' },
    });
  });

  it('active: score is the lease deadline, the row carries token and claimant', async () => {
    const view = await readJobView(ctx, ids.active);
    expect(view.state).toBe('active');
    expect(view.score).toBe(deadline);
    expect(view.fields).toMatchObject({ d: '{"who":"active"}', n: 'a-name', a: '1', c: 'w.0' });
  });

  it('schedule: score is the run-at', async () => {
    const view = await readJobView(ctx, ids.schedule);
    expect(view).toMatchObject({ state: 'schedule', score: runAt });
  });

  it('dead: score 0 and the last error', async () => {
    const view = await readJobView(ctx, ids.dead);
    expect(view).toMatchObject({ state: 'dead', score: 0, fields: { e: 'fatal', a: '1' } });
  });

  it('completed: a retained row in no set, with its result', async () => {
    const view = await readJobView(ctx, ids.completed);
    expect(view.state).toBe('completed');
    expect(view.score).toBeNull();
    expect(view.fields.r).toBe('{"ok":1}');
    expect(view.fields.f).toMatch(/^\d+$/);
  });

  it('unknown: no row and no set (finished without retention, or never existed)', async () => {
    expect(await readJobView(ctx, ids.gone)).toEqual({ state: 'unknown', score: null, fields: {} });
    expect(await readJobView(ctx, mint())).toEqual({ state: 'unknown', score: null, fields: {} });
  });

  it('reads many jobs in one round trip, in the order asked', async () => {
    const order = [ids.dead, ids.pending, ids.gone, ids.schedule];
    const views = await readJobViews(ctx, order);
    expect(views.map((v) => v.state)).toEqual(['dead', 'pending', 'unknown', 'schedule']);
  });

  it("reports the job's own budget, else its last claiming worker's, else the built-in 3; and its own backoff", async () => {
    const q = scriptContext(redis, uniqueQueue('view-budget'));
    const [own, claimed, waiting] = [mint(), mint(), mint()];
    const backoff = '{"type":"fixed","delayMs":250}';
    await enqueueJobs(
      q,
      [
        jobRecord(own, { maxAttempts: 5, backoff }),
        jobRecord(claimed, { maxAttempts: undefined }),
        jobRecord(waiting, { maxAttempts: undefined }),
      ],
      60_000,
    );
    await claimJobs(q, { count: 2, leaseMs: 30_000, claimantPrefix: 'w', maxAttempts: 7 });
    const view = async (id: string) => toJobView(q.keys.queue, id as JobId, await readJobView(q, id));
    expect(await view(own)).toMatchObject({
      maxAttempts: 5,
      ownMaxAttempts: true,
      attemptsLeft: 4,
      backoff: { type: 'fixed', delayMs: 250 },
    });
    const worker = await view(claimed);
    expect(worker).toMatchObject({ maxAttempts: 7, ownMaxAttempts: false, attemptsLeft: 6 });
    expect(worker?.backoff).toBeUndefined();
    expect(await view(waiting)).toMatchObject({ maxAttempts: 3, ownMaxAttempts: false, attemptsLeft: 3 });
  });

  it('refuses malformed ids', async () => {
    await expect(readJobView(ctx, 'JOB123')).rejects.toBeInstanceOf(InvalidJobIdError);
    await expect(readJobViews(ctx, [ids.pending, 'nope'])).rejects.toBeInstanceOf(InvalidJobIdError);
  });
  describe('with lanes and priorities', () => {
    it('a job pending in its own lane at its level reads pending', async () => {
      const laneCtx = scriptContext(redis, uniqueQueue('view-lanes'));
      const [id] = await enqueueIn(laneCtx, mint, [['acme', 5]]);
      const view = await readJobView(laneCtx, id);
      expect(view).toMatchObject({ state: 'pending', score: 0 });
      expect(view.fields).toMatchObject({ l: 'acme', y: '5' });
      const [claimed] = await claimUpTo(laneCtx, 1);
      expect((await readJobView(laneCtx, claimed.id)).state).toBe('active');
    });
  });
});
