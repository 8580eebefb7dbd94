/**
 * The retry budget and the backoff follow the queue's serving configuration wherever a job
 * was enqueued (docs/options.md, "Which settings a job runs with"): a producer-only app
 * enqueues, a separate worker app serves, as this repository's api and worker do. Only a
 * job's own enqueue options win over the worker's.
 */
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  InvalidArgumentError,
  JobFailedError,
  QueueService,
  queueKeys,
  type EchoMqModuleOptions,
  type EnqueueOptions,
  type Job,
  type QueueOptions,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, concerns, EventTail, processorClass, serverNow } from './fixtures/support';

const apps: INestApplication[] = [];
const tails: EventTail[] = [];
let redis: Redis;

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

afterEach(async () => {
  for (const opened of tails.splice(0)) opened.close();
  await closeAll(apps.splice(0));
});

async function boot(
  providers: Parameters<typeof bootApp>[0],
  options: Partial<EchoMqModuleOptions> = {},
): Promise<INestApplication> {
  const app = await bootApp(providers, { shutdownGraceMs: 300, ...options });
  apps.push(app);
  return app;
}

/** An app with no processors: it runs no claim loop and no reaper, and only enqueues and reads. */
async function producer(queue: string, maxAttempts: number): Promise<QueueService> {
  return (await boot([], { queues: { [queue]: { maxAttempts } } })).get(QueueService);
}

/** What a handler saw of each attempt. */
interface Seen {
  readonly attempt: number;
  readonly maxAttempts: number;
  /** Server time just before the handler threw (the fail script's own TIME comes after it). */
  readonly thrownAt: number;
}

/** A worker whose handler throws on its first `failures` attempts (every one by default). */
function failingWorker(queue: string, options: QueueOptions, failures = Infinity) {
  const seen: Seen[] = [];
  const Proc = processorClass(queue, { retainCompletedMs: 60_000, ...options }, async (job: Job) => {
    if (job.attempt > failures) return { attempt: job.attempt };
    seen.push({ attempt: job.attempt, maxAttempts: job.maxAttempts, thrownAt: await serverNow(redis) });
    throw new Error(`failure ${job.attempt}`);
  });
  return { Proc, seen };
}

/** Enqueues from the producer, waits for the job to go dead, and returns how many attempts it got. */
async function attemptsUntilDead(queues: QueueService, queue: string, options: EnqueueOptions = {}) {
  const id = await queues.enqueue(queue, {}, options);
  await expect(queues.waitFor(queue, id, 10_000)).rejects.toBeInstanceOf(JobFailedError);
  return { id, view: await queues.getJob(queue, id) };
}

const NO_WAIT = { type: 'fixed', delayMs: 0 } as const;

describe('the retry budget of a job enqueued by another app', () => {
  it("is the serving @Processor's maxAttempts, not the producer's configuration", async () => {
    const queue = uniqueQueue('budget-decorator');
    const queues = await producer(queue, 2);
    const id = await queues.enqueue(queue, {});
    // Before any worker claims it, the job has no budget of its own: the view says so.
    expect(await queues.getJob(queue, id)).toMatchObject({ maxAttempts: 3, ownMaxAttempts: false });

    const worker = failingWorker(queue, { maxAttempts: 7, backoff: NO_WAIT });
    await boot([worker.Proc], { queues: { [queue]: { maxAttempts: 5 } } });
    await expect(queues.waitFor(queue, id, 10_000)).rejects.toBeInstanceOf(JobFailedError);

    expect(worker.seen.map(({ attempt, maxAttempts }) => [attempt, maxAttempts])).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((attempt) => [attempt, 7]),
    );
    expect(await queues.getJob(queue, id)).toMatchObject({
      state: 'dead',
      attempts: 7,
      maxAttempts: 7,
      ownMaxAttempts: false,
      attemptsLeft: 0,
      lastError: 'Error: failure 7',
    });
    expect(await queues.metrics(queue)).toMatchObject({ failed: 6, dead: 1 });
  });

  it("is the worker's forRoot queues[q].maxAttempts when its @Processor sets none", async () => {
    const queue = uniqueQueue('budget-config');
    const queues = await producer(queue, 9);
    const worker = failingWorker(queue, { backoff: NO_WAIT });
    await boot([worker.Proc], { queues: { [queue]: { maxAttempts: 4 } }, defaults: { maxAttempts: 6 } });

    const { view } = await attemptsUntilDead(queues, queue);
    expect(worker.seen.map((s) => s.attempt)).toEqual([1, 2, 3, 4]);
    expect(view).toMatchObject({ state: 'dead', attempts: 4, maxAttempts: 4 });
  });

  it('is the job’s own maxAttempts when the enqueue call set one', async () => {
    const queue = uniqueQueue('budget-own');
    const queues = await producer(queue, 9);
    const worker = failingWorker(queue, { maxAttempts: 7, backoff: NO_WAIT });
    await boot([worker.Proc]);

    const { view } = await attemptsUntilDead(queues, queue, { maxAttempts: 2 });
    expect(worker.seen.map(({ attempt, maxAttempts }) => [attempt, maxAttempts])).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect(view).toMatchObject({ state: 'dead', attempts: 2, maxAttempts: 2, ownMaxAttempts: true });
  });
});

describe("a job's own backoff", () => {
  it("schedules the retry by the job's own delay, not the serving worker's", async () => {
    const queue = uniqueQueue('backoff-own');
    const queues = await producer(queue, 3);
    const own = 1_500;
    // The serving policy would wait a minute: a retry scheduled by it could not fit the bracket below.
    const worker = failingWorker(queue, { backoff: { type: 'fixed', delayMs: 60_000 } }, 1);
    await boot([worker.Proc]);
    const events = await EventTail.open(redisUrl(), queue);
    tails.push(events);

    const id = await queues.enqueue(queue, {}, { backoff: { type: 'fixed', delayMs: own } });
    await events.next((event) => event.type === 'failed' && concerns(event, id));
    const seenAt = await serverNow(redis);
    const view = await queues.getJob(queue, id);
    expect(view).toMatchObject({ state: 'schedule', backoff: { type: 'fixed', delayMs: own } });
    // The fail script read its clock after the throw and before the event was seen: its
    // run-at minus that fail time is the job's own delay exactly when it lies in this bracket.
    const runAt = view?.runAt?.getTime() ?? Number.NaN;
    expect(runAt - worker.seen[0].thrownAt).toBeGreaterThanOrEqual(own);
    expect(runAt - seenAt).toBeLessThanOrEqual(own);

    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ attempt: 2 });
  });

  it('refuses a custom backoff function with InvalidArgumentError and writes nothing', async () => {
    const queue = uniqueQueue('backoff-custom');
    const queues = await producer(queue, 3);
    const custom = { type: 'custom', delay: () => 10 } as unknown as EnqueueOptions['backoff'];

    await expect(queues.enqueue(queue, {}, { backoff: custom })).rejects.toThrow(InvalidArgumentError);
    // All or nothing: a good job next to the refused one is not written either.
    await expect(queues.enqueueMany(queue, [{ data: 1 }, { data: 2, backoff: custom }])).rejects.toThrow(
      /custom backoff function cannot be stored/,
    );

    const keys = queueKeys(queue);
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await redis.keys(`${keys.jobPrefix}*`)).toEqual([]);
    expect(await redis.exists(keys.events, keys.metrics, keys.wake)).toBe(0);
    expect(await queues.listQueues()).not.toContain(queue);
  });
});
