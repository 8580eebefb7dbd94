import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { setTimeout as sleep } from 'node:timers/promises';
import { QueueService, type Job } from '@app/echomq';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll, processorClass } from '../worker/fixtures/support';
import { busiestWindow, claimCalls, claimsThatGotJobs, claimTimes } from './support/claim-record';

const WORKERS = 4;
const RATE = { max: 5, windowMs: 500 };
/** Five windows' worth of jobs: the starts span at least four full windows. */
const JOBS = 5 * RATE.max;
const LEASE_MS = 20_000;
/**
 * Each job's simulated work outlasts a window, so the worker that filled one window is still
 * busy when the next opens: every window is claimed by whichever worker is free, and more than
 * one worker takes part.
 */
const WORK_MS = RATE.windowMs + 100;

describe('flow control: a rate limit shared by every worker', () => {
  const apps: INestApplication[] = [];
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });
  afterEach(async () => {
    await closeAll(apps.splice(0));
  });

  it('lets four workers together start at most max jobs in any window, and a limited worker costs few claims', async () => {
    const queue = uniqueQueue('rate');
    const startedBy = new Map<string, number>();
    for (let worker = 0; worker < WORKERS; worker++) {
      const name = `worker-${worker}`;
      const Worker = processorClass(
        queue,
        { concurrency: 5, leaseMs: LEASE_MS, rateLimit: RATE },
        async (job: Job) => {
          startedBy.set(name, (startedBy.get(name) ?? 0) + 1);
          await sleep(WORK_MS);
          return job.id;
        },
      );
      apps.push(await bootApp([Worker]));
    }
    const queues = apps[0].get(QueueService);
    expect(await queues.getLimits(queue)).toMatchObject({ rateLimit: RATE });

    const ids = await queues.enqueueMany(
      queue,
      Array.from({ length: JOBS }, (_, n) => ({ data: n })),
    );
    await Promise.all(ids.map((id) => queues.waitFor(queue, id, 20_000)));

    const times = await claimTimes(redis, queue);
    expect(times).toHaveLength(JOBS);
    // The guarantee: in ANY windowMs-long span, at most max starts, all workers together.
    // (Equal to max: the limit was reached, so a breach would have shown.)
    expect(busiestWindow(times, RATE.windowMs)).toBe(RATE.max);
    expect(times[times.length - 1] - times[0]).toBeGreaterThanOrEqual(4 * RATE.windowMs);
    expect([...startedBy.values()].reduce((sum, n) => sum + n, 0)).toBe(JOBS);
    expect(startedBy.size).toBeGreaterThanOrEqual(2);

    // A limited worker sleeps until the window opens instead of polling: the claim calls that
    // got nothing (limited, or idle) stay within one per worker per window (docs/flow-control.md);
    // a worker that polled would make hundreds.
    const calls = await claimCalls(redis, queue, LEASE_MS, times[0], times[times.length - 1]);
    const empty = calls - (await claimsThatGotJobs(redis, queue));
    const windows = Math.ceil((times[times.length - 1] - times[0]) / RATE.windowMs) + 1;
    expect(empty).toBeGreaterThanOrEqual(0);
    expect(empty).toBeLessThanOrEqual(WORKERS * windows);
  });
});
