import type { INestApplication } from '@nestjs/common';
import { JobAbortedError, QueueService, type Job } from '@app/echomq';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { closeAll, DeferredMap, processorClass, withTimeout } from './fixtures/support';

const MAX_ATTEMPTS = 3;

const apps: INestApplication[] = [];
const cleanups: (() => void)[] = [];

async function boot(queue: string, providers: Parameters<typeof bootApp>[0], graceMs: number) {
  const app = await bootApp(providers, {
    shutdownGraceMs: graceMs,
    queues: { [queue]: { maxAttempts: MAX_ATTEMPTS } },
  });
  apps.push(app);
  return app;
}

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  await closeAll(apps.splice(0));
});

/**
 * Handlers that ignore their signal and run until the test lets them finish (with
 * `finish`): the worst case for a shutdown. They note what their signal said.
 */
function stubbornWorker(queue: string) {
  const started = new DeferredMap<Job>();
  const finish = new DeferredMap<void>();
  const abortReasons = new Map<string, unknown>();
  cleanups.push(() => finish.resolveAll());
  const Proc = processorClass(
    queue,
    { concurrency: 5, leaseMs: 5_000, retainCompletedMs: 60_000 },
    async (job) => {
      job.signal.addEventListener('abort', () => abortReasons.set(job.id, job.signal.reason), {
        once: true,
      });
      started.get(job.id).resolve(job);
      await finish.get(job.id).promise;
      return { finishedBy: 'first worker', attempt: job.attempt };
    },
  );
  return { Proc, started, finish, abortReasons };
}

/** A second worker that completes whatever it is given. */
function finisher(queue: string) {
  return processorClass(queue, { retainCompletedMs: 60_000 }, (job: Job) => ({
    finishedBy: 'second worker',
    attempt: job.attempt,
    attemptInBudget: job.attemptInBudget,
  }));
}

describe('graceful shutdown', () => {
  it('returns from close() mid-job, releases unfinished jobs with their budget intact, and aborts them', async () => {
    const queue = uniqueQueue('shutdown');
    const worker = stubbornWorker(queue);
    const app = await boot(queue, [worker.Proc], 300);
    const queues = app.get(QueueService);

    const ids = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }, { data: 3 }]);
    await Promise.all(ids.map((id) => worker.started.get(id).promise));
    expect((await queues.counts(queue)).active).toBe(3);

    await withTimeout(app.close(), 10_000, 'app.close() with handlers that never finish');
    apps.splice(apps.indexOf(app), 1);

    // The app's connections are closed: read through another app.
    const reader = await boot(queue, [], 300);
    const readerQueues = reader.get(QueueService);
    expect(await readerQueues.counts(queue)).toEqual({ pending: 3, active: 0, schedule: 0, dead: 0 });
    for (const id of ids) {
      expect(await readerQueues.getJob(queue, id)).toMatchObject({
        state: 'pending',
        attempts: 1,
        attemptsLeft: MAX_ATTEMPTS,
      });
      const reason = worker.abortReasons.get(id);
      expect(reason).toBeInstanceOf(JobAbortedError);
      expect(reason).toMatchObject({ id, reason: 'shutdown' });
    }
    expect(await readerQueues.metrics(queue)).toMatchObject({ released: 3 });

    await boot(queue, [finisher(queue)], 300);
    const results = await Promise.all(ids.map((id) => readerQueues.waitFor(queue, id, 10_000)));
    // The released claim did not count against the budget: attempt 2 is the first of it.
    expect(results).toEqual(ids.map(() => ({ finishedBy: 'second worker', attempt: 2, attemptInBudget: 1 })));

    // The first worker's handlers finishing now (after release) change nothing.
    worker.finish.resolveAll();
    for (const id of ids) {
      expect(await readerQueues.getJob(queue, id)).toMatchObject({
        state: 'completed',
        result: { finishedBy: 'second worker', attempt: 2, attemptInBudget: 1 },
      });
    }
  });

  it('completes jobs that finish within the grace period instead of releasing them', async () => {
    const queue = uniqueQueue('grace');
    const worker = stubbornWorker(queue);
    const app = await boot(queue, [worker.Proc], 1_000);
    const queues = app.get(QueueService);

    const [quick, stuck] = await queues.enqueueMany(queue, [{ data: 'quick' }, { data: 'stuck' }]);
    await Promise.all([worker.started.get(quick).promise, worker.started.get(stuck).promise]);

    const closing = app.close();
    worker.finish.get(quick).resolve(); // finishes during the grace period; `stuck` never does
    await withTimeout(closing, 10_000, 'app.close()');
    apps.splice(apps.indexOf(app), 1);

    const reader = await boot(queue, [], 300);
    const readerQueues = reader.get(QueueService);
    expect(await readerQueues.getJob(queue, quick)).toMatchObject({
      state: 'completed',
      attempts: 1,
      result: { finishedBy: 'first worker', attempt: 1 },
    });
    expect(worker.abortReasons.has(quick)).toBe(false);
    expect(await readerQueues.getJob(queue, stuck)).toMatchObject({
      state: 'pending',
      attempts: 1,
      attemptsLeft: MAX_ATTEMPTS,
    });
    expect(worker.abortReasons.get(stuck)).toMatchObject({ reason: 'shutdown' });
    expect(await readerQueues.metrics(queue)).toMatchObject({ completed: 1, released: 1 });
  });
});
