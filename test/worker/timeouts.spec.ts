import type { INestApplication, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { once } from 'node:events';
import {
  EchoMqModule,
  JobTimeoutError,
  QueueService,
  StaleJobError,
  type Job,
  type QueueOptions,
  type WorkerEvents,
} from '@app/echomq/internal';
import { CapturedLog } from '../support/captured-log';
import { redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, deferred, DeferredMap, loopOf, processorClass, waitUntil } from './fixtures/support';

const apps: INestApplication[] = [];
/** Handlers blocked on a promise the test controls, by job id and attempt; opened in cleanup. */
const gates = new DeferredMap<void>();

/** Boots a worker whose log the test can read (a late handler's outcome is only logged). */
async function boot(providers: Provider[]): Promise<{ app: INestApplication; log: CapturedLog }> {
  const log = new CapturedLog();
  const moduleRef = await Test.createTestingModule({
    imports: [
      EchoMqModule.forRoot({
        connection: { url: redisUrl() },
        reaper: { intervalMs: 100 },
        shutdownGraceMs: 300,
      }),
    ],
    providers,
  }).compile();
  const app = moduleRef.createNestApplication({ logger: log });
  await app.init();
  apps.push(app);
  return { app, log };
}

afterEach(async () => {
  gates.resolveAll();
  await closeAll(apps.splice(0));
});

const gateOf = (job: Job): ReturnType<DeferredMap['get']> => gates.get(`${job.id}/${job.attempt}`);

/** Immediate retries, one job at a time: a second attempt can only run in the first one's freed slot. */
function options(extra: QueueOptions): QueueOptions {
  return { backoff: { type: 'fixed', delayMs: 0 }, concurrency: 1, retainCompletedMs: 60_000, ...extra };
}

describe('attempt timeouts', () => {
  it('fails the attempt at its deadline while the handler ignores its signal, and retries it', async () => {
    const queue = uniqueQueue('timeout');
    const seen: Job[] = [];
    const Proc = processorClass(queue, options({ timeoutMs: 200, maxAttempts: 3 }), async (job) => {
      seen.push(job);
      // The first attempt ignores its signal and blocks until the test lets it go.
      if (job.attempt === 1) await gateOf(job).promise;
      return { attempt: job.attempt };
    });
    const { app, log } = await boot([Proc]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);
    const failed = once(loop.events, 'failed') as Promise<WorkerEvents['failed']>;

    const id = await queues.enqueue(queue, {});
    const [failedId, error, state] = await failed;

    // Settled at the deadline, not when the handler returns: it is still blocked.
    const first = seen[0];
    expect(gates.get(`${id}/1`).settled).toBe(false);
    expect(failedId).toBe(id);
    expect(error).toBeInstanceOf(JobTimeoutError);
    expect(error).toMatchObject({ code: 'JOB_TIMEOUT', id, timeoutMs: 200 });
    expect((error as Error).message).toBe(`Job ${id} timed out after 200 ms`);
    expect(state).toBe('pending');
    expect(first.timeoutMs).toBe(200);
    expect(first.signal.aborted).toBe(true);
    expect(first.signal.reason).toBe(error);

    // The second attempt runs in the slot the first one freed, while the first still runs.
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ attempt: 2 });
    expect(gates.get(`${id}/1`).settled).toBe(false);
    expect(seen.map((job) => job.attempt)).toEqual([1, 2]);
    expect(seen[1].attemptInBudget).toBe(2);
    expect(loop.busy).toBe(true);

    // The first handler's late return is ignored: logged, never sent (no stale completion).
    gates.get(`${id}/1`).resolve();
    await log.waitFor(
      (line) => line.level === 'debug' && line.message.includes(`Job ${id} attempt 1 returned`),
    );
    await waitUntil(() => !loop.busy, 'the timed-out handler stops counting as busy once it returns');
    expect(loop.runner.staleSettlements).toBe(0);
    expect(await queues.getJob(queue, id)).toMatchObject({
      state: 'completed',
      attempts: 2,
      result: { attempt: 2 },
    });
  });

  it('sends a timed-out job to dead when its budget is spent, before the handler returns', async () => {
    const queue = uniqueQueue('timeout-dead');
    const Proc = processorClass(queue, options({ timeoutMs: 150, maxAttempts: 1 }), async (job) => {
      await gateOf(job).promise;
    });
    const { app } = await boot([Proc]);
    const queues = app.get(QueueService);
    const failed = once(loopOf(app, queue).events, 'failed') as Promise<WorkerEvents['failed']>;

    const id = await queues.enqueue(queue, {});
    const [, error, state] = await failed;

    expect(error).toBeInstanceOf(JobTimeoutError);
    expect(state).toBe('dead');
    // Read while the handler is still blocked: the row already records the timeout.
    expect(await queues.getJob(queue, id)).toMatchObject({
      state: 'dead',
      attempts: 1,
      lastError: `JobTimeoutError: Job ${id} timed out after 150 ms`,
    });
    expect(gates.get(`${id}/1`).settled).toBe(false);
  });

  it("gives the job's own timeoutMs precedence over its processor's", async () => {
    const queue = uniqueQueue('timeout-own');
    const seen = new Map<string, number | null>();
    const Proc = processorClass(queue, options({ timeoutMs: 600_000, maxAttempts: 1 }), async (job) => {
      seen.set(job.id, job.timeoutMs);
      // Only the job with a timeout of its own blocks: the processor's would never fire in time.
      if (job.data === 'own') await gateOf(job).promise;
      return job.data;
    });
    const { app } = await boot([Proc]);
    const queues = app.get(QueueService);
    const failed = once(loopOf(app, queue).events, 'failed') as Promise<WorkerEvents['failed']>;

    const plain = await queues.enqueue(queue, 'plain');
    await expect(queues.waitFor(queue, plain, 10_000)).resolves.toBe('plain');
    const own = await queues.enqueue(queue, 'own', { timeoutMs: 150 });
    const [failedId, error, state] = await failed;

    expect(failedId).toBe(own);
    expect(error).toMatchObject({ code: 'JOB_TIMEOUT', timeoutMs: 150 });
    expect(state).toBe('dead');
    expect(seen.get(plain)).toBe(600_000);
    expect(seen.get(own)).toBe(150);
  });

  it('runs a job without any timeout to its end, and says so on the job', async () => {
    const queue = uniqueQueue('timeout-none');
    let timeoutMs: number | null | undefined;
    const Proc = processorClass(queue, options({}), (job) => {
      timeoutMs = job.timeoutMs;
      return 'done';
    });
    const { app } = await boot([Proc]);
    const queues = app.get(QueueService);

    const id = await queues.enqueue(queue, {});

    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('done');
    expect(timeoutMs).toBeNull();
  });
});

/** Resolves with the first `count` emissions of a loop event. */
function nth<K extends keyof WorkerEvents>(
  events: ReturnType<typeof loopOf>['events'],
  name: K,
  count: number,
): Promise<WorkerEvents[K][]> {
  const seen: WorkerEvents[K][] = [];
  return new Promise((resolve) => {
    const listener = (...args: WorkerEvents[K]): void => {
      seen.push(args);
      if (seen.length < count) return;
      events.off(name, listener as never);
      resolve(seen);
    };
    events.on(name, listener as never);
  });
}

describe('handlers that outlive their timeout', () => {
  it('warns once for an attempt whose handler ignored the abort, and not for one that honoured it', async () => {
    const queue = uniqueQueue('timeout-warn');
    const Proc = processorClass(queue, options({ timeoutMs: 150, maxAttempts: 1 }), async (job) => {
      if (job.data === 'ignores') return gateOf(job).promise;
      // Honours its signal: rejects as soon as it aborts.
      await new Promise((_, reject) =>
        job.signal.addEventListener('abort', () => reject(job.signal.reason as Error)),
      );
    });
    const { app, log } = await boot([Proc]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);
    const warned = (id: string) => (line: { level: string; message: string }) =>
      line.level === 'warn' && line.message.includes(`Job ${id} attempt 1 timed out after 150 ms`);

    const honours = await queues.enqueue(queue, 'honours');
    await once(loop.events, 'failed');
    const ignores = await queues.enqueue(queue, 'ignores');
    const [line] = await log.waitFor(warned(ignores));

    expect(line.message).toContain('its handler ignored the abort and is still running');
    expect(log.matching(warned(honours))).toHaveLength(0);
    gates.get(`${ignores}/1`).resolve();
    await log.waitFor((line) => line.message.includes(`Job ${ignores} attempt 1 returned after`));
    expect(log.matching(warned(ignores))).toHaveLength(1);
  });

  it('lets lingering handlers past concurrency take slots: a handler that always hangs stops the claiming', async () => {
    const queue = uniqueQueue('timeout-bound');
    const starts: { id: string; releasedBefore: number }[] = [];
    let released = 0;
    const Proc = processorClass(queue, options({ timeoutMs: 100, maxAttempts: 1 }), async (job) => {
      starts.push({ id: job.id, releasedBefore: released });
      await gateOf(job).promise; // ignores its signal, every time
    });
    const { app, log } = await boot([Proc]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);
    const twoFailed = nth(loop.events, 'failed', 2);

    const ids: string[] = [];
    for (let n = 0; n < 4; n++) ids.push(await queues.enqueue(queue, { n }));
    await twoFailed;

    // Concurrency 1: one lingering handler is free, the second takes the only slot.
    expect(loop.lingering).toBe(2);
    expect(loop.inFlight).toBe(0);
    expect(starts.map((start) => start.id)).toEqual(ids.slice(0, 2));
    expect(await queues.counts(queue)).toMatchObject({ pending: 2, active: 0, dead: 2 });
    await log.waitFor(
      (line) => line.level === 'warn' && line.message.includes('2 timed-out handlers are still running'),
    );

    // One of them returns: its slot frees, and the next job is claimed (and hangs, and times out).
    const thirdFailed = once(loop.events, 'failed');
    released += 1;
    gates.get(`${ids[0]}/1`).resolve();
    await thirdFailed;
    expect(starts).toEqual([
      { id: ids[0], releasedBefore: 0 },
      { id: ids[1], releasedBefore: 0 },
      { id: ids[2], releasedBefore: 1 },
    ]);
    expect(loop.lingering).toBe(2);
    expect(await queues.counts(queue)).toMatchObject({ pending: 1, dead: 3 });
  });

  it('shuts down within its grace while a timed-out handler lingers, leaving the attempt failed by its timeout', async () => {
    const queue = uniqueQueue('timeout-shutdown');
    const Proc = processorClass(queue, options({ timeoutMs: 100, maxAttempts: 1 }), async (job) => {
      await gateOf(job).promise;
    });
    const { app } = await boot([Proc]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);
    const failed = once(loop.events, 'failed');
    const id = await queues.enqueue(queue, {});
    await failed;
    expect(loop.lingering).toBe(1);

    // close() returns although the handler never does: shutdown waits for it only within its grace.
    apps.splice(apps.indexOf(app), 1);
    await app.close();

    expect(gates.get(`${id}/1`).settled).toBe(false);
    expect(loop.lingering).toBe(1);
    // Nothing was released or changed at shutdown: the attempt stays failed by its timeout.
    const { app: other } = await boot([]);
    expect(await other.get(QueueService).getJob(queue, id)).toMatchObject({
      state: 'dead',
      attempts: 1,
      lastError: `JobTimeoutError: Job ${id} timed out after 100 ms`,
    });
  });

  it('refuses progress() and extendLease() from a handler after its timeout with StaleJobError', async () => {
    const queue = uniqueQueue('timeout-late-calls');
    const late = deferred<PromiseSettledResult<void>[]>();
    const started = new DeferredMap<void>();
    const Proc = processorClass(queue, options({ timeoutMs: 150, maxAttempts: 2 }), async (job) => {
      started.get(`${job.id}/${job.attempt}`).resolve();
      await gateOf(job).promise;
      if (job.attempt !== 1) return 'second';
      // The first attempt, long timed out, carries on as if nothing happened.
      late.resolve(await Promise.allSettled([job.progress({ step: 'late' }), job.extendLease(60_000)]));
      return 'first';
    });
    const { app } = await boot([Proc]);
    const queues = app.get(QueueService);
    const loop = loopOf(app, queue);
    const failed = once(loop.events, 'failed');

    const id = await queues.enqueue(queue, {});
    await failed;
    // The retry holds the job now (attempt 2), blocked; the first handler goes on.
    await started.get(`${id}/2`).promise;
    gates.get(`${id}/1`).resolve();
    const [progress, extend] = await late.promise;

    for (const outcome of [progress, extend]) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StaleJobError);
    }
    // Neither touched the second attempt's job.
    const view = await queues.getJob(queue, id);
    expect(view).toMatchObject({ state: 'active', attempts: 2 });
    expect(view?.progress).toBeUndefined();
    gates.get(`${id}/2`).resolve();
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('second');
    expect(loop.runner.staleSettlements).toBe(0);
  });
});
