import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  JobFailedError,
  ProcessorExplorer,
  QueueService,
  UnrecoverableError,
  type BackoffPolicy,
  type Job,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, concerns, EventTail, processorClass, serverNow } from './fixtures/support';

const apps: INestApplication[] = [];
const tails: EventTail[] = [];
let redis: Redis;

/**
 * Boots a worker app. maxAttempts is set per queue in forRoot: a job enqueued without a
 * budget of its own runs under the serving worker's, which each claim records on the row
 * (see the last test for the decorator's maxAttempts, and retry-budget.spec.ts for jobs
 * enqueued by another app).
 */
async function boot(
  providers: Parameters<typeof bootApp>[0],
  queue: string,
  maxAttempts: number,
): Promise<INestApplication> {
  const app = await bootApp(providers, { shutdownGraceMs: 300, queues: { [queue]: { maxAttempts } } });
  apps.push(app);
  return app;
}

async function tail(queue: string): Promise<EventTail> {
  const opened = await EventTail.open(redisUrl(), queue);
  tails.push(opened);
  return opened;
}

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

/**
 * A processor that fails its first `failures` attempts, noting the server time just
 * before each throw (the failure's own TIME inside the fail script comes after it),
 * and records the server time at which each attempt started.
 */
function flakyProcessor(queue: string, failures: number, backoff: BackoffPolicy) {
  const thrownAt: number[] = [];
  const startedAt: number[] = [];
  const Proc = processorClass(queue, { backoff, retainCompletedMs: 60_000 }, async (job) => {
    startedAt.push(await serverNow(redis));
    if (job.attempt <= failures) {
      thrownAt.push(await serverNow(redis));
      throw new Error(`failure ${job.attempt}`);
    }
    return { attempt: job.attempt };
  });
  return { Proc, thrownAt, startedAt };
}

/**
 * After each failure, the job waits in schedule until failure time + the backoff.
 * The failure happened on the server between `thrownAt` (before the throw) and the
 * moment the test saw the `failed` event (read right after it), so the run-at must
 * lie in [thrownAt + delay, seenAt + delay] - an exact bracket, no tolerance.
 */
async function expectScheduledAfter(
  queues: QueueService,
  queue: string,
  id: string,
  thrownAt: number,
  delayMs: number,
): Promise<number> {
  const seenAt = await serverNow(redis);
  const view = await queues.getJob(queue, id);
  expect(view?.state).toBe('schedule');
  const runAt = view?.runAt?.getTime() ?? Number.NaN;
  expect(runAt).toBeGreaterThanOrEqual(thrownAt + delayMs);
  expect(runAt).toBeLessThanOrEqual(seenAt + delayMs);
  return runAt;
}

describe('retries', () => {
  it('waits the fixed backoff after a failure before the next attempt', async () => {
    const queue = uniqueQueue('fixed');
    const delayMs = 800;
    const flaky = flakyProcessor(queue, 1, { type: 'fixed', delayMs });
    const app = await boot([flaky.Proc], queue, 3);
    const queues = app.get(QueueService);
    const events = await tail(queue);

    const id = await queues.enqueue(queue, {});
    await events.next((event) => event.type === 'failed' && concerns(event, id));
    const runAt = await expectScheduledAfter(queues, queue, id, flaky.thrownAt[0], delayMs);
    expect((await queues.getJob(queue, id))?.lastError).toBe('Error: failure 1');

    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ attempt: 2 });
    expect(flaky.startedAt).toHaveLength(2);
    expect(flaky.startedAt[1]).toBeGreaterThanOrEqual(runAt);
  });

  it('doubles an exponential backoff (jitter 0) up to its cap', async () => {
    const queue = uniqueQueue('expo');
    const backoff: BackoffPolicy = { type: 'exponential', delayMs: 400, maxDelayMs: 1_000, jitter: 0 };
    const expected = [400, 800, 1_000]; // 400 * 2^0, 400 * 2^1, then 1600 capped at 1000
    const flaky = flakyProcessor(queue, expected.length, backoff);
    const app = await boot([flaky.Proc], queue, expected.length + 1);
    const queues = app.get(QueueService);
    const events = await tail(queue);

    const id = await queues.enqueue(queue, {});
    const runAts: number[] = [];
    for (const [index, delayMs] of expected.entries()) {
      await events.next(
        (event) => event.type === 'failed' && concerns(event, id) && event.attempt === String(index + 1),
      );
      runAts.push(await expectScheduledAfter(queues, queue, id, flaky.thrownAt[index], delayMs));
    }

    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ attempt: 4 });
    runAts.forEach((runAt, index) => expect(flaky.startedAt[index + 1]).toBeGreaterThanOrEqual(runAt));
  });

  it('sends a job that exhausts its attempts to dead with its last error', async () => {
    const queue = uniqueQueue('exhaust');
    const flaky = flakyProcessor(queue, Infinity, { type: 'fixed', delayMs: 0 });
    const app = await boot([flaky.Proc], queue, 3);
    const queues = app.get(QueueService);

    const id = await queues.enqueue(queue, {});
    const failure = await queues.waitFor(queue, id, 10_000).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(JobFailedError);
    expect((failure as JobFailedError).lastError).toBe('Error: failure 3');
    expect(await queues.getJob(queue, id)).toMatchObject({
      state: 'dead',
      attempts: 3,
      maxAttempts: 3,
      attemptsLeft: 0,
      lastError: 'Error: failure 3',
    });
    expect(flaky.startedAt).toHaveLength(3);
    expect(await queues.metrics(queue)).toMatchObject({ failed: 2, dead: 1 });
  });

  it('sends a job that throws UnrecoverableError to dead at once', async () => {
    const queue = uniqueQueue('unrecoverable');
    const attempts: number[] = [];
    const Proc = processorClass(queue, {}, (job: Job) => {
      attempts.push(job.attempt);
      throw new UnrecoverableError('the input can never be processed');
    });
    const app = await boot([Proc], queue, 5);
    const queues = app.get(QueueService);

    const id = await queues.enqueue(queue, {});
    await expect(queues.waitFor(queue, id, 10_000)).rejects.toBeInstanceOf(JobFailedError);

    expect(await queues.getJob(queue, id)).toMatchObject({
      state: 'dead',
      attempts: 1,
      attemptsLeft: 4,
      lastError: 'UnrecoverableError: the input can never be processed',
    });
    expect(attempts).toEqual([1]);
  });

  it('runs a dead job again after retry(), with a fresh budget and the token still counting up', async () => {
    const queue = uniqueQueue('revive');
    const seen: [attempt: number, inBudget: number][] = [];
    // Fails attempts 1-3: the first budget of 2 is spent (dead), then after retry one more
    // failure still leaves room in the fresh budget for attempt 4 to succeed.
    const Proc = processorClass(
      queue,
      { backoff: { type: 'fixed', delayMs: 0 }, retainCompletedMs: 60_000 },
      (job: Job) => {
        seen.push([job.attempt, job.attemptInBudget]);
        if (job.attempt <= 3) throw new Error(`failure ${job.attempt}`);
        return { attempt: job.attempt };
      },
    );
    const app = await boot([Proc], queue, 2);
    const queues = app.get(QueueService);

    const id = await queues.enqueue(queue, {});
    await expect(queues.waitFor(queue, id, 10_000)).rejects.toBeInstanceOf(JobFailedError);
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'dead', attempts: 2, attemptsLeft: 0 });

    await queues.retry(queue, id);
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ attempt: 4 });

    expect(seen).toEqual([
      [1, 1],
      [2, 2],
      [3, 1],
      [4, 2],
    ]);
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'completed', attempts: 4 });
  });

  it('gives jobs the maxAttempts set on @Processor (it overrides the module configuration)', async () => {
    const queue = uniqueQueue('decorated');
    const attempts: number[] = [];
    const Proc = processorClass(
      queue,
      { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0 } },
      (job: Job) => {
        attempts.push(job.attempt);
        throw new Error(`failure ${job.attempt}`);
      },
    );
    const app = await bootApp([Proc], { shutdownGraceMs: 300 });
    apps.push(app);
    const queues = app.get(QueueService);
    expect(app.get(ProcessorExplorer).loop(queue)?.options.maxAttempts).toBe(2);

    const id = await queues.enqueue(queue, {});
    await expect(queues.waitFor(queue, id, 10_000)).rejects.toBeInstanceOf(JobFailedError);
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'dead', maxAttempts: 2, attempts: 2 });
    expect(attempts).toEqual([1, 2]);
  });
});
