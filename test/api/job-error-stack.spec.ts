import { claimJobs, failJob } from '@app/echomq/internal';
import { failRequest } from '@app/echomq/worker/fail-request';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { connect, scriptContext, uniqueQueue } from '../support/redis';
import { startApi, type RunningApi } from './support/api';

/** The job detail over HTTP carries the stack of the job's last error (the dashboard shows it). */
describe("api: the stack of a job's last error", () => {
  let api: RunningApi;
  let redis: Redis;

  beforeAll(async () => {
    api = await startApi();
    redis = connect();
  });
  afterAll(async () => {
    await api.close();
    await redis.quit();
  });

  /** Enqueues over HTTP, then claims and fails the job with `error` as a worker would. */
  async function failedWith(queue: string, error: unknown, maxAttempts: number): Promise<string> {
    const res = await request(api.url)
      .post(`/queues/${queue}/jobs`)
      .send({ data: {}, maxAttempts })
      .expect(201);
    const id = res.body.id as string;
    const ctx = scriptContext(redis, queue);
    const { jobs } = await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: 'stack' });
    expect(jobs.map((job) => job.id)).toEqual([id]);
    await failJob(ctx, jobs[0], failRequest({ type: 'fixed', delayMs: 0 }, jobs[0], error));
    return id;
  }

  it('GET /queues/:q/jobs/:id gives lastErrorStack for a job that failed with an Error', async () => {
    const queue = uniqueQueue('api-stack');
    const thrown = new RangeError('the invoice total is negative');
    const id = await failedWith(queue, thrown, 1);
    const job = await request(api.url).get(`/queues/${queue}/jobs/${id}`).expect(200);
    expect(job.body).toMatchObject({
      state: 'dead',
      lastError: 'RangeError: the invoice total is negative',
      lastErrorStack: thrown.stack,
    });
    expect(job.body.lastErrorStack).toMatch(/^RangeError: the invoice total is negative\n\s+at /);
    expect(job.body.lastErrorStack).toContain('job-error-stack.spec.ts');
  });

  it('has no lastErrorStack when the last failure had none (a thrown string)', async () => {
    const queue = uniqueQueue('api-stack');
    const id = await failedWith(queue, 'plain text', 3);
    const job = await request(api.url).get(`/queues/${queue}/jobs/${id}`).expect(200);
    expect(job.body).toMatchObject({ lastError: 'plain text', attempts: 1 });
    expect(job.body).not.toHaveProperty('lastErrorStack');
  });
});
