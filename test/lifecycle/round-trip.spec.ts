import {
  claimJobs,
  completeJob,
  enqueueJobs,
  failJob,
  readJobView,
  StaleJobError,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

describe('a job round trip through the scripts', () => {
  let redis: Redis;
  const mint = idMinter();

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('enqueues, claims, fails into schedule, and completes with a fenced token', async () => {
    const ctx = scriptContext(redis, uniqueQueue());
    const id = mint();
    const job = { id, data: '{"n":1}', name: '', maxAttempts: 3, delayMs: 0, runAtMs: 0, idempotencyKey: '' };
    await enqueueJobs(ctx, [job], 60_000);
    expect(await redis.zrange(ctx.keys.pending, 0, -1)).toEqual([id]);

    const first = await claimJobs(ctx, { count: 5, leaseMs: 10_000, claimantPrefix: 'w1' });
    expect(first.jobs).toHaveLength(1);
    expect(first.jobs[0]).toMatchObject({ id, attempt: 1, data: '{"n":1}', maxAttempts: 3 });

    const outcome = await failJob(ctx, first.jobs[0], {
      error: 'boom',
      backoffMs: 50_000,
      unrecoverable: false,
    });
    expect(outcome.state).toBe('schedule');
    await expect(completeJob(ctx, first.jobs[0], '1', 0)).rejects.toBeInstanceOf(StaleJobError);

    await redis.zadd(ctx.keys.schedule, 0, id); // time passes for this job
    const second = await claimJobs(ctx, { count: 5, leaseMs: 10_000, claimantPrefix: 'w2' });
    expect(second.jobs[0]).toMatchObject({ id, attempt: 2 });
    await completeJob(ctx, second.jobs[0], '"done"', 60_000);
    const view = await readJobView(ctx, id);
    expect(view.state).toBe('completed');
    expect(view.fields.r).toBe('"done"');
  });
});
