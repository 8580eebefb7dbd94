import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { JobAbortedError, QueueService, queueKeys, type Job } from '@app/echomq/internal';
import { FaultProxy } from '../support/fault-proxy';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import {
  closeAll,
  deferred,
  processorClass,
  serverNow,
  waitUntil,
  withTimeout,
  type Deferred,
} from './fixtures/support';

/**
 * Issue 8, items 4 and 8, on the worker's side: a lease as the worker sees it. The worker
 * reaches Redis through a fault proxy that can silence every socket (no data, no FIN), and
 * the command deadline is set far beyond the test, so while the proxy is silent no Redis call
 * returns at all: whatever the worker does then, it does without an answer from Redis.
 */
const LEASE_MS = 1_000;
// No call returns within a test, so nothing but the worker's own clock can act.
const HANGING = { commandTimeoutMs: 60_000, replayWindowMs: 120_000 };

const apps: INestApplication[] = [];
const gates: Deferred<void>[] = [];
let proxy: FaultProxy;
let redis: Redis;

function gate(): Deferred<void> {
  const entry = deferred<void>();
  gates.push(entry);
  return entry;
}

function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });
}

async function boot(providers: Parameters<typeof bootApp>[0]): Promise<INestApplication> {
  const app = await bootApp(providers, { connection: { url: proxy.url }, shutdownGraceMs: 300, ...HANGING });
  apps.push(app);
  return app;
}

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

beforeEach(async () => {
  const target = new URL(redisUrl());
  proxy = await FaultProxy.start({ target: { host: target.hostname, port: Number(target.port) } });
});

afterEach(async () => {
  for (const entry of gates.splice(0)) entry.resolve();
  // Silenced sockets stay dead: reset them, so the app reconnects and can close normally.
  await proxy.heal();
  proxy.closeAll();
  await closeAll(apps.splice(0));
  await proxy.stop();
});

describe('leases as the worker sees them', () => {
  it('aborts a job whose lease ran out locally while every Redis call hangs', async () => {
    const queue = uniqueQueue('hung-lease');
    const started = deferred<Job>();
    const Worker = processorClass(queue, { concurrency: 1, leaseMs: LEASE_MS }, async (job) => {
      started.resolve(job);
      throw await aborted(job.signal);
    });
    const app = await boot([Worker]);
    const id = await app.get(QueueService).enqueue(queue, {});
    const job = await started.promise;

    proxy.silence(); // the next heartbeat is sent and never answered; nor is anything after it

    const reason = await withTimeout(aborted(job.signal), 10_000, 'the job to be aborted while Redis hangs');
    expect(reason).toBeInstanceOf(JobAbortedError);
    expect(reason).toMatchObject({ id, reason: 'lease-lost' });
  });

  it('keeps the longer lease a handler asked for with extendLease(ms) through later heartbeats', async () => {
    const queue = uniqueQueue('kept-lease');
    const extended = deferred<Job>();
    const control = deferred<Job>();
    const finish = gate();
    const Worker = processorClass<{ extend: boolean }>(
      queue,
      { concurrency: 2, leaseMs: LEASE_MS, retainCompletedMs: 60_000 },
      async (job) => {
        if (job.data.extend) {
          await job.extendLease(60_000);
          extended.resolve(job);
        } else {
          control.resolve(job);
        }
        await Promise.race([finish.promise, aborted(job.signal)]);
        return job.signal.aborted ? 'aborted' : 'finished';
      },
    );
    const app = await boot([Worker]);
    const [long] = await app
      .get(QueueService)
      .enqueueMany(queue, [{ data: { extend: true } }, { data: { extend: false } }]);
    const longJob = await extended.promise;
    const shortJob = await control.promise;

    // Two heartbeats after the extend: beats never overlap, so the worker has applied the
    // first one's reply (the one that used to shorten the lease) before the second is sent.
    // Each beat extends both jobs, so two beats count four extends.
    const queues = app.get(QueueService);
    const beats = (await queues.metrics(queue)).extended ?? 0;
    await waitUntil(
      async () => ((await queues.metrics(queue)).extended ?? 0) >= beats + 4,
      'two heartbeats of both jobs',
    );
    const deadline = Number(await redis.zscore(queueKeys(queue).active, long));
    expect(deadline - (await serverNow(redis))).toBeGreaterThan(30_000); // Redis kept it

    // Now no extend can be confirmed: the worker's own estimate decides. Both jobs had the
    // same heartbeats; only the one that asked for nothing more must be given up.
    proxy.silence();
    await expect(
      withTimeout(aborted(shortJob.signal), 10_000, 'the control job’s lease to run out'),
    ).resolves.toMatchObject({
      reason: 'lease-lost',
    });
    expect(longJob.signal.aborted).toBe(false);
  });
});
