import { Logger, type INestApplication } from '@nestjs/common';
import {
  OnWorkerEvent,
  Processor,
  QueueService,
  type Job,
  type WorkerCompletedEvent,
  type WorkerFailedEvent,
  type WorkerThrottledEvent,
  RateLimitedError,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { closeAll, DeferredMap } from '../worker/fixtures/support';

interface Task {
  readonly n: number;
  readonly flaky?: boolean;
  /** Hold the handler until the test opens this job's gate. */
  readonly gated?: boolean;
  /** Throw a RateLimitedError of this many ms on the first attempt. */
  readonly limitedMs?: number;
}

interface Squared {
  readonly squared: number;
}

/** Shared by every app of a test: which processor instance started each job, and the gates. */
const started = new DeferredMap<object>();
const gates = new DeferredMap();

function processorFor(queue: string) {
  @Processor(queue, { concurrency: 1, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0 } })
  class Squarer {
    /** Every job id any of this instance's worker-event methods was told about. */
    readonly reported: string[] = [];
    readonly completed = new DeferredMap<WorkerCompletedEvent<Task, Squared>>();
    readonly failed = new DeferredMap<WorkerFailedEvent<Task>>();
    readonly throttled = new DeferredMap<WorkerThrottledEvent<Task>>();

    async process(job: Job<Task>): Promise<Squared> {
      started.get(job.id).resolve(this);
      if (job.data.gated) await gates.get(job.id).promise;
      if (job.data.flaky) throw new Error(`flaky ${job.data.n} on attempt ${job.attempt}`);
      if (job.data.limitedMs && job.attempt === 1) throw new RateLimitedError(job.data.limitedMs);
      return { squared: job.data.n * job.data.n };
    }

    // Declared first, so it runs before the others: its throw must not reach them.
    @OnWorkerEvent('completed')
    explode(): void {
      throw new Error('worker listener boom');
    }

    @OnWorkerEvent('completed')
    onCompleted(event: WorkerCompletedEvent<Task, Squared>): void {
      this.reported.push(event.id);
      this.completed.get(event.id).resolve(event);
    }

    @OnWorkerEvent('failed')
    onFailed(event: WorkerFailedEvent<Task>): void {
      this.reported.push(event.id);
      this.failed.get(`${event.id} #${event.job?.attempt}`).resolve(event);
    }

    @OnWorkerEvent('throttled')
    onThrottled(event: WorkerThrottledEvent<Task>): void {
      this.reported.push(event.id);
      this.throttled.get(event.id).resolve(event);
    }
  }
  return Squarer;
}

describe('@OnWorkerEvent methods of a @Processor', () => {
  let apps: INestApplication[] = [];
  let logged: jest.SpyInstance;

  beforeEach(() => {
    logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    await closeAll(apps);
    apps = [];
    logged.mockRestore();
  });

  it('get typed completed and failed payloads, with the Job, for their own jobs', async () => {
    const queue = uniqueQueue('wev');
    const Squarer = processorFor(queue);
    const app = await bootApp([Squarer]);
    apps.push(app);
    const squarer = app.get(Squarer);
    const queues = app.get(QueueService);

    const ok = await queues.enqueue(queue, { n: 3 });
    const completed = await squarer.completed.get(ok).promise;
    expect(completed).toMatchObject({ type: 'completed', queue, id: ok, result: { squared: 9 } });
    expect(completed.job.id).toBe(ok);
    expect(completed.job.data).toEqual({ n: 3 });
    expect(completed.job.attempt).toBe(1);
    const messages = logged.mock.calls.map(([message]) => String(message));
    expect(messages.some((m) => m.includes('Squarer.explode') && m.includes('worker listener boom'))).toBe(
      true,
    );

    // maxAttempts 2, no backoff: the first failure goes back to pending, the second to dead.
    const flaky = await queues.enqueue(queue, { n: 4, flaky: true });
    const first = await squarer.failed.get(`${flaky} #1`).promise;
    expect(first).toMatchObject({ type: 'failed', queue, id: flaky, state: 'pending' });
    expect((first.error as Error).message).toBe('flaky 4 on attempt 1');
    expect(first.job?.data).toEqual({ n: 4, flaky: true });
    const last = await squarer.failed.get(`${flaky} #2`).promise;
    expect(last.state).toBe('dead');
    expect((last.error as Error).message).toBe('flaky 4 on attempt 2');

    // A RateLimitedError is a throttle, not a failure: the job comes back and completes.
    const limited = await queues.enqueue(queue, { n: 5, limitedMs: 50 });
    const throttled = await squarer.throttled.get(limited).promise;
    expect(throttled).toMatchObject({ type: 'throttled', queue, id: limited, retryAfterMs: 50 });
    expect(throttled.job.attempt).toBe(1);
    await expect(squarer.completed.get(limited).promise).resolves.toMatchObject({ result: { squared: 25 } });
    // Told twice about it (throttled, completed), never as failed.
    expect(squarer.reported.filter((id) => id === limited)).toHaveLength(2);
  });

  it('are not told about the jobs a second worker app ran', async () => {
    const queue = uniqueQueue('wev');
    const Squarer = processorFor(queue);
    const one = await bootApp([Squarer]);
    apps.push(one);
    const two = await bootApp([Squarer]);
    apps.push(two);
    const queues = one.get(QueueService);

    // Each app runs one job at a time and both jobs wait at their gates, so each app holds one.
    const ids = [
      await queues.enqueue(queue, { n: 5, gated: true }),
      await queues.enqueue(queue, { n: 6, gated: true }),
    ];
    const runners = await Promise.all(ids.map((id) => started.get(id).promise));
    expect(new Set(runners)).toEqual(new Set([one.get(Squarer), two.get(Squarer)]));
    for (const id of ids) gates.get(id).resolve();

    for (const [index, id] of ids.entries()) {
      const runner = runners[index] as InstanceType<typeof Squarer>;
      await expect(runner.completed.get(id).promise).resolves.toMatchObject({ id });
    }
    const [runnerOfFirst, runnerOfSecond] = runners as InstanceType<typeof Squarer>[];
    expect(runnerOfFirst.reported).toEqual([ids[0]]);
    expect(runnerOfSecond.reported).toEqual([ids[1]]);
  });
});
