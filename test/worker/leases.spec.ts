import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { JobAbortedError, QueueService, StaleJobError, type Job } from '@app/echomq';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import {
  closeAll,
  deferred,
  heartbeatOf,
  loopOf,
  processorClass,
  serverNow,
  waitUntil,
  type Deferred,
} from './fixtures/support';

// Short, but with room for a starved event loop: a heartbeat (every lease/3) must be late by
// two thirds of a lease before a lease is lost by accident (300 ms flaked under CPU load).
const LEASE_MS = 1_000;

const apps: INestApplication[] = [];
const gates: Deferred<void>[] = [];
let redis: Redis;

async function boot(providers: Parameters<typeof bootApp>[0]): Promise<INestApplication> {
  const app = await bootApp(providers, { shutdownGraceMs: 300 });
  apps.push(app);
  return app;
}

/** A promise the test resolves to let a handler finish; opened in cleanup whatever happened. */
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

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

afterEach(async () => {
  for (const entry of gates.splice(0)) entry.resolve();
  await closeAll(apps.splice(0));
});

describe('leases', () => {
  it('reaps a job whose worker froze; another worker completes it and the frozen one’s late result is STALE', async () => {
    const queue = uniqueQueue('frozen');
    const options = { concurrency: 1, leaseMs: LEASE_MS, retainCompletedMs: 60_000, maxAttempts: 3 };
    const startedOnA = deferred<Job>();
    const releaseA = gate();
    // concurrency 1: once its only slot is taken, A cannot re-claim the reaped job itself.
    const WorkerA = processorClass(queue, options, async (job) => {
      startedOnA.resolve(job);
      await releaseA.promise;
      return { by: 'A', attempt: job.attempt };
    });
    const appA = await boot([WorkerA]);
    const queues = appA.get(QueueService);
    const loopA = loopOf(appA, queue);

    const id = await queues.enqueue(queue, { payload: 1 });
    const jobOnA = await startedOnA.promise;
    expect(jobOnA).toMatchObject({ id, attempt: 1 });
    heartbeatOf(loopA).stop(); // A freezes: its handler runs on, its lease is no longer extended

    const WorkerB = processorClass(queue, options, (job) => ({ by: 'B', attempt: job.attempt }));
    const appB = await boot([WorkerB]);

    await expect(appB.get(QueueService).waitFor(queue, id, 10_000)).resolves.toEqual({
      by: 'B',
      attempt: 2,
    });
    expect(jobOnA.signal.aborted).toBe(false); // A has not noticed anything: it is frozen

    releaseA.resolve(); // A wakes up and returns its (late) result
    await waitUntil(() => loopA.runner.staleSettlements === 1, 'A’s late completion to be refused as stale');
    expect(loopA.inFlight).toBe(0);

    const view = await queues.getJob(queue, id);
    expect(view).toMatchObject({ state: 'completed', attempts: 2, result: { by: 'B', attempt: 2 } });
    expect(loopOf(appB, queue).runner.staleSettlements).toBe(0);
    const metrics = await queues.metrics(queue);
    expect(metrics).toMatchObject({ reaped: 1, completed: 1 });
    expect(metrics.stale).toBeGreaterThanOrEqual(1); // A's refused completion (a heartbeat racing B's completion may add one)
  });

  it('aborts the handler’s signal with a lease-lost JobAbortedError when its lease was lost', async () => {
    const queue = uniqueQueue('lost');
    const first = deferred<Job>();
    const firstReason = deferred<unknown>();
    const Worker = processorClass(
      queue,
      { concurrency: 1, leaseMs: LEASE_MS, retainCompletedMs: 60_000 },
      async (job) => {
        if (job.attempt > 1) return `attempt ${job.attempt}`;
        first.resolve(job);
        const reason = await aborted(job.signal);
        firstReason.resolve(reason);
        throw reason;
      },
    );
    const app = await boot([Worker]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);

    const id = await queues.enqueue(queue, {});
    const job = await first.promise;
    heartbeatOf(loop).stop();
    // The reaper takes the expired lease back (its only slot busy, the worker cannot re-claim it).
    await waitUntil(
      async () => (await queues.getJob(queue, id))?.state === 'pending',
      'the expired lease to be reaped',
    );
    expect(job.signal.aborted).toBe(false);
    heartbeatOf(loop).start(); // the process wakes up; its next heartbeat learns the lease is gone

    const reason = await firstReason.promise;
    expect(job.signal.aborted).toBe(true);
    expect(reason).toBeInstanceOf(JobAbortedError);
    expect(reason).toMatchObject({ id, reason: 'lease-lost', code: 'JOB_ABORTED' });

    // Its failure is stale (it changes nothing); the job runs again from pending.
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('attempt 2');
    await waitUntil(() => loop.runner.staleSettlements === 1, 'the aborted attempt’s fail to be stale');
    // The row keeps the reaper's note, not the stale attempt's error.
    expect(await queues.getJob(queue, id)).toMatchObject({
      state: 'completed',
      attempts: 2,
      lastError: 'lease expired during attempt 1',
    });
  });

  it('aborts an active job’s handler when the job is removed', async () => {
    const queue = uniqueQueue('removed');
    const started = deferred<Job>();
    const afterAbort = deferred<{ reason: unknown; progress: unknown; extend: unknown }>();
    const Worker = processorClass(queue, { concurrency: 2, leaseMs: LEASE_MS }, async (job) => {
      started.resolve(job);
      const reason = await aborted(job.signal);
      afterAbort.resolve({
        reason,
        progress: await job.progress('too late').catch((error: unknown) => error),
        extend: await job.extendLease().catch((error: unknown) => error),
      });
      throw reason;
    });
    const app = await boot([Worker]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);

    const id = await queues.enqueue(queue, {});
    await started.promise;
    await expect(queues.remove(queue, id)).resolves.toBe('active');

    const seen = await afterAbort.promise;
    expect(seen.reason).toBeInstanceOf(JobAbortedError);
    // The cancels stream brings the removal at once; a heartbeat landing first would find the
    // lease lost instead. Either way the claim is void.
    expect(seen.reason).toMatchObject({ id });
    expect(['removed', 'lease-lost']).toContain((seen.reason as JobAbortedError).reason);
    expect(seen.progress).toBeInstanceOf(StaleJobError);
    expect(seen.extend).toBeInstanceOf(StaleJobError);

    await waitUntil(() => loop.runner.staleSettlements === 1, 'the removed job’s fail to be stale');
    expect(await queues.getJob(queue, id)).toBeUndefined();
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });

  it('makes job.progress() readable through getJob while the job runs', async () => {
    const queue = uniqueQueue('progress');
    const reported = deferred<void>();
    const finish = gate();
    const Worker = processorClass(queue, { leaseMs: LEASE_MS, retainCompletedMs: 60_000 }, async (job) => {
      await job.progress({ step: 1, of: 2 });
      reported.resolve();
      await finish.promise;
      await job.progress({ step: 2, of: 2 });
      return 'done';
    });
    const app = await boot([Worker]);
    const queues = app.get(QueueService);

    const id = await queues.enqueue(queue, {});
    await reported.promise;
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'active', progress: { step: 1, of: 2 } });

    finish.resolve();
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('done');
    expect(await queues.getJob(queue, id)).toMatchObject({
      state: 'completed',
      progress: { step: 2, of: 2 },
    });
  });

  it('job.extendLease() moves the lease deadline later (to now + ms), and a shorter extension never moves it back', async () => {
    const queue = uniqueQueue('extend');
    // A long lease keeps the heartbeat (every lease/3 = 10 s) out of the way of the readings.
    const leaseMs = 30_000;
    const extendedLong = deferred<void>();
    const shorter = gate();
    const extendedDefault = deferred<void>();
    const finish = gate();
    const Worker = processorClass(queue, { leaseMs }, async (job) => {
      await job.extendLease(120_000);
      extendedLong.resolve();
      await shorter.promise;
      await job.extendLease();
      extendedDefault.resolve();
      await finish.promise;
      return 'ok';
    });
    const app = await boot([Worker]);
    const queues = app.get(QueueService);

    const id = await queues.enqueue(queue, {});
    await extendedLong.promise;
    const now = await serverNow(redis);
    let deadline = (await queues.getJob(queue, id))?.leaseDeadline?.getTime() ?? 0;
    expect(deadline - now).toBeGreaterThan(leaseMs);
    expect(deadline - now).toBeLessThanOrEqual(120_000);

    // A deadline only moves later: the default (shorter) extension keeps the long one, as a
    // heartbeat does (issue 8, item 8).
    const longDeadline = deadline;
    shorter.resolve();
    await extendedDefault.promise;
    deadline = (await queues.getJob(queue, id))?.leaseDeadline?.getTime() ?? 0;
    expect(deadline).toBe(longDeadline);

    finish.resolve();
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('ok');
  });
});
