import type { INestApplication } from '@nestjs/common';
import { JobAbortedError, QueueService, type Job } from '@app/echomq';
import { bootApp } from '../support/nest';
import { RedisServer } from '../support/redis-server';
import { uniqueQueue } from '../support/redis';
import {
  closeAll,
  DeferredMap,
  deferred,
  heartbeatOf,
  loopOf,
  processorClass,
  waitUntil,
} from './fixtures/support';

/**
 * Each test restarts a Redis of its own (no persistence: the data goes with it). What
 * is tested is that the worker recovers by itself, not what survives the restart.
 */
const apps: INestApplication[] = [];
const cleanups: (() => void)[] = [];
let server: RedisServer | undefined;

async function boot(providers: Parameters<typeof bootApp>[0]): Promise<INestApplication> {
  if (!server) throw new Error('start the server first');
  const app = await bootApp(providers, { connection: { url: server.url }, shutdownGraceMs: 300 });
  apps.push(app);
  return app;
}

beforeEach(async () => {
  server = await RedisServer.start();
});

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await closeAll(apps.splice(0));
  await server?.destroy();
  server = undefined;
});

describe('a worker across a Redis restart', () => {
  it('resumes by itself after a restart while idle', async () => {
    const queue = uniqueQueue('restart-idle');
    const Proc = processorClass(queue, { leaseMs: 1_000, retainCompletedMs: 60_000 }, (job: Job) => ({
      got: job.data,
    }));
    const app = await boot([Proc]);
    const queues = app.get(QueueService);
    const before = await queues.enqueue(queue, 'before');
    await expect(queues.waitFor(queue, before, 10_000)).resolves.toEqual({ got: 'before' });

    await server!.restart();

    const after = await queues.enqueue(queue, 'after');
    await expect(queues.waitFor(queue, after, 20_000)).resolves.toEqual({ got: 'after' });
  }, 30_000);

  it('processes new jobs after a restart while jobs were in flight', async () => {
    const queue = uniqueQueue('restart-busy');
    const started = new DeferredMap<Job>();
    const abortReasons = new DeferredMap<unknown>();
    const stop = deferred<void>();
    cleanups.push(() => stop.resolve());
    // Both slots are taken by blocking jobs, which end only when their signal fires.
    const Proc = processorClass(
      queue,
      { concurrency: 2, leaseMs: 1_000, retainCompletedMs: 60_000 },
      async (job: Job) => {
        if (job.name !== 'block') return { got: job.data };
        started.get(job.id).resolve(job);
        await new Promise<void>((resolve) => {
          job.signal.addEventListener('abort', () => resolve(), { once: true });
          void stop.promise.then(resolve);
        });
        abortReasons.get(job.id).resolve(job.signal.reason);
        throw job.signal.reason;
      },
    );
    const app = await boot([Proc]);
    const queues = app.get(QueueService);
    const blocking = await queues.enqueueMany(queue, [
      { data: 1, name: 'block' },
      { data: 2, name: 'block' },
    ]);
    await Promise.all(blocking.map((id) => started.get(id).promise));

    await server!.restart();

    // The in-flight jobs went with the data: their heartbeat finds the leases gone and aborts them.
    for (const id of blocking) {
      const reason = await abortReasons.get(id).promise;
      expect(reason).toBeInstanceOf(JobAbortedError);
      expect(reason).toMatchObject({ reason: 'lease-lost' });
    }
    const fresh = await queues.enqueueMany(queue, [{ data: 'x' }, { data: 'y' }, { data: 'z' }]);
    const results = await Promise.all(fresh.map((id) => queues.waitFor(queue, id, 20_000)));
    expect(results).toEqual([{ got: 'x' }, { got: 'y' }, { got: 'z' }]);
  }, 30_000);

  it('still reaps the queue’s expired leases after a restart that lost the queue registry', async () => {
    const queue = uniqueQueue('restart-reap');
    const first = deferred<Job>();
    const Proc = processorClass(
      queue,
      { concurrency: 1, leaseMs: 1_000, retainCompletedMs: 60_000 },
      async (job: Job) => {
        if (job.attempt > 1) return { attempt: job.attempt };
        first.resolve(job);
        await new Promise((resolve) => job.signal.addEventListener('abort', resolve, { once: true }));
        throw job.signal.reason;
      },
    );
    const app = await boot([Proc]);
    const queues = app.get(QueueService);
    const warmUp = await queues.enqueue(queue, {});
    await first.promise;
    await server!.restart();
    await waitUntil(() => loopOf(app, queue).inFlight === 0, 'the lost job’s handler to be aborted');
    await waitUntil(async () => (await queues.getJob(queue, warmUp)) === undefined, 'the data to be gone');

    // The reaper walks the queue registry (emq:queues), which went with the data. A worker
    // must keep reaping the queues it serves (and enqueue must re-register them) regardless.
    const id = await queues.enqueue(queue, {});
    await waitUntil(
      async () => (await queues.getJob(queue, id))?.state === 'active',
      'the new job to be claimed',
    );
    // Freeze the worker (its heartbeat stops) as a crash would: only a reaper can return the job.
    const heartbeat = heartbeatOf(loopOf(app, queue));
    heartbeat.stop();
    await waitUntil(
      async () => (await queues.getJob(queue, id))?.state === 'pending',
      'the expired lease to be reaped',
      5_000,
    );
    heartbeat.start();
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ attempt: 2 });
  }, 30_000);
});
