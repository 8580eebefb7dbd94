import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { QueueService, queueKeys, type JobBackoffPolicy } from '@app/echomq/internal';
import { startApi, type RunningApi } from '../api/support/api';
import { backdate } from '../support/assertions';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll, DeferredMap, loopOf, processorClass } from './fixtures/support';

/** The worker's own policy: no wait at all, so any wait a job shows is the job's own. */
const WORKER_BACKOFF = { type: 'fixed', delayMs: 0 } as const;
/** The waits below are computed by the fail script from the server clock: these bound its ms rounding only. */
const ROUNDING_MS = 50;

const apps: INestApplication[] = [];
let redis: Redis;

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

afterEach(async () => {
  await closeAll(apps.splice(0));
});

/** A worker whose handler always throws; `failures` resolves per "<id>:<attempt>" once Redis recorded it. */
async function failingWorker(queue: string) {
  const failures = new DeferredMap<string>();
  const Worker = processorClass(queue, { backoff: WORKER_BACKOFF, maxAttempts: 5, leaseMs: 60_000 }, () => {
    throw new Error('always fails');
  });
  const app = await bootApp([Worker]);
  apps.push(app);
  loopOf(app, queue).events.on('failed', (id, _error, state, job) => {
    failures.get(`${id}:${job?.attempt}`).resolve(state);
  });
  return { queues: app.get(QueueService), failures };
}

/** How long after its failure the job is due again: run-at less the server time of its 'failed' event. */
async function waitAfterFailure(queues: QueueService, queue: string, id: string, attempt: number) {
  const entries = await redis.xrevrange(queueKeys(queue).events, '+', '-', 'COUNT', 200);
  const failed = entries.find(([, flat]) => {
    const fields: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
    return fields.type === 'failed' && fields.ids === id && fields.attempt === String(attempt);
  });
  if (!failed) throw new Error(`no 'failed' event for ${id} attempt ${attempt}`);
  const view = await queues.getJob(queue, id);
  expect(view?.state).toBe('schedule');
  return (view?.runAt?.getTime() ?? NaN) - Number(failed[0].split('-')[0]);
}

function expectAbout(ms: number, expected: number): void {
  expect(ms).toBeGreaterThanOrEqual(expected - ROUNDING_MS);
  expect(ms).toBeLessThanOrEqual(expected + ROUNDING_MS);
}

describe("a job's own backoff wins over the worker's", () => {
  it('fixed: every retry waits the job’s delay; a job without one retries at once (the worker’s)', async () => {
    const queue = uniqueQueue('ownfixed');
    const { queues, failures } = await failingWorker(queue);
    const own = await queues.enqueue(queue, {}, { backoff: { type: 'fixed', delayMs: 45_000 } });
    const plain = await queues.enqueue(queue, {});

    await expect(failures.get(`${own}:1`).promise).resolves.toBe('schedule');
    expectAbout(await waitAfterFailure(queues, queue, own, 1), 45_000);
    // The worker's fixed 0: straight back to pending, claimed and failed again.
    await expect(failures.get(`${plain}:1`).promise).resolves.toBe('pending');
    await expect(failures.get(`${plain}:2`).promise).resolves.toBe('pending');
  });

  it('exponential: the job’s delay doubles from one failure to the next', async () => {
    const queue = uniqueQueue('ownexp');
    const { queues, failures } = await failingWorker(queue);
    const backoff: JobBackoffPolicy = { type: 'exponential', delayMs: 20_000, jitter: 0 };
    const id = await queues.enqueue(queue, {}, { backoff });

    await expect(failures.get(`${id}:1`).promise).resolves.toBe('schedule');
    expectAbout(await waitAfterFailure(queues, queue, id, 1), 20_000);
    // Due now: the reaper (every 100 ms here) promotes it, the worker fails it a second time.
    await backdate(redis, queueKeys(queue).schedule, id);
    await expect(failures.get(`${id}:2`).promise).resolves.toBe('schedule');
    expectAbout(await waitAfterFailure(queues, queue, id, 2), 40_000);
  });

  it('is accepted over HTTP, shown in the job view, and used by the worker', async () => {
    const queue = uniqueQueue('httpbackoff');
    let api: RunningApi | undefined;
    try {
      api = await startApi();
      const backoff = { type: 'exponential', delayMs: 30_000, jitter: 0 };
      const created = await request(api.url)
        .post(`/queues/${queue}/jobs`)
        .send({ data: {}, backoff })
        .expect(201);
      const id = created.body.id as string;
      const view = await request(api.url).get(`/queues/${queue}/jobs/${id}`).expect(200);
      expect(view.body.backoff).toEqual(backoff);

      const { queues, failures } = await failingWorker(queue);
      await expect(failures.get(`${id}:1`).promise).resolves.toBe('schedule');
      expectAbout(await waitAfterFailure(queues, queue, id, 1), 30_000);
      await request(api.url)
        .post(`/queues/${queue}/jobs`)
        .send({ data: {}, backoff: { type: 'custom', delayMs: 5 } })
        .expect(400);
    } finally {
      await api?.close();
    }
  });
});
