import { randomBytes } from 'node:crypto';
import { Logger, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  OnQueueEvent,
  Processor,
  ProcessorExplorer,
  QueueEventsListener,
  QueueService,
  UnrecoverableError,
  type AnyQueueEvent,
  type CompletedEvent,
  type DeadEvent,
  type FailedEvent,
  type Job,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { DeferredMap, waitUntil } from '../worker/fixtures/support';

interface Task {
  readonly n: number;
  /** Throw an UnrecoverableError: straight to dead. */
  readonly fatal?: boolean;
  /** Throw a plain error: failed, then dead on the last attempt. */
  readonly flaky?: boolean;
  /** Return a result too large for the event. */
  readonly big?: boolean;
  /** Report progress before returning. */
  readonly progress?: boolean;
}

interface Doubled {
  readonly doubled: number;
  readonly padding?: string;
}

function workerFor(queue: string) {
  @Processor(queue, { concurrency: 4, backoff: { type: 'fixed', delayMs: 0 } })
  class Doubler {
    async process(job: Job<Task>): Promise<Doubled> {
      const { n } = job.data;
      if (job.data.fatal) throw new UnrecoverableError(`cannot double ${n}`);
      if (job.data.flaky) throw new Error(`flaky ${n} on attempt ${job.attempt}`);
      if (job.data.progress) await job.progress({ step: 1, of: 2 });
      return job.data.big ? { doubled: n * 2, padding: 'x'.repeat(4_000) } : { doubled: n * 2 };
    }
  }
  return Doubler;
}

function listenerFor(queue: string) {
  @QueueEventsListener(queue)
  class TaskEvents {
    /** Every call of every method, so a test can tell that none came after shutdown. */
    calls = 0;
    readonly completed = new DeferredMap<CompletedEvent<Doubled>>();
    readonly alsoCompleted = new DeferredMap<CompletedEvent<Doubled>>();
    readonly failures = new DeferredMap<FailedEvent | DeadEvent>();
    /** The catch-all's events, keyed "type id #n" (the n-th event of that type naming that job). */
    readonly arrivals = new DeferredMap<AnyQueueEvent>();
    readonly typesOf = new Map<string, string[]>();

    // Declared first, so it runs before the others: its throw must not reach them.
    @OnQueueEvent('completed')
    explode(): void {
      this.calls += 1;
      throw new Error('listener boom');
    }

    @OnQueueEvent('completed')
    onCompleted(event: CompletedEvent<Doubled>): void {
      this.calls += 1;
      for (const id of event.ids) this.completed.get(id).resolve(event);
    }

    @OnQueueEvent('completed')
    async alsoOnCompleted(event: CompletedEvent<Doubled>): Promise<void> {
      this.calls += 1;
      await Promise.resolve();
      for (const id of event.ids) this.alsoCompleted.get(id).resolve(event);
    }

    @OnQueueEvent('failed')
    @OnQueueEvent('dead')
    onFailure(event: FailedEvent | DeadEvent): void {
      this.calls += 1;
      for (const id of event.ids) this.failures.get(`${event.type} ${id} #${event.attempt}`).resolve(event);
    }

    @OnQueueEvent()
    onAny(event: AnyQueueEvent): void {
      this.calls += 1;
      for (const id of event.ids) {
        const types = this.typesOf.get(id) ?? [];
        types.push(event.type);
        this.typesOf.set(id, types);
        const n = types.filter((type) => type === event.type).length;
        this.arrivals.get(`${event.type} ${id} #${n}`).resolve(event);
      }
    }
  }
  return TaskEvents;
}

describe('@QueueEventsListener classes in a producer-only app', () => {
  const connectionName = `qev-${randomBytes(4).toString('hex')}`;
  const queue = uniqueQueue('qev');
  const Listener = listenerFor(queue);
  let producer: INestApplication;
  let worker: INestApplication;
  let listener: InstanceType<typeof Listener>;
  let queues: QueueService;
  let redis: Redis;
  let logged: jest.SpyInstance;
  let producerClosed = false;

  /** Connections the producer app holds open on the suite's Redis (its command client and readers). */
  async function producerConnections(): Promise<number> {
    const list = (await redis.client('LIST')) as string;
    return list.split('\n').filter((line) => line.includes(` name=${connectionName} `)).length;
  }

  beforeAll(async () => {
    logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    redis = connect();
    producer = await bootApp([Listener], { connection: { url: redisUrl(), connectionName } });
    worker = await bootApp([workerFor(queue)]);
    listener = producer.get(Listener);
    queues = producer.get(QueueService);
  });
  afterAll(async () => {
    if (!producerClosed) await producer.close();
    await worker.close();
    await redis.quit();
    logged.mockRestore();
  });

  it('gets typed completed payloads, with results, of jobs a separate worker ran', async () => {
    expect(producer.get(ProcessorExplorer).loop(queue)).toBeUndefined();
    const id = await queues.enqueue(queue, { n: 21 });

    const event = await listener.completed.get(id).promise;
    expect(event.type).toBe('completed');
    expect(event.queue).toBe(queue);
    expect(event.results[event.ids.indexOf(id)]).toEqual({ doubled: 42 });
    expect(event.omitted).not.toContain(id);
    expect(typeof event.at).toBe('number');
    expect(event.raw.type).toBe('completed');

    // Both methods on 'completed' got the same payload, though the first one threw.
    await expect(listener.alsoCompleted.get(id).promise).resolves.toBe(event);
    const messages = logged.mock.calls.map(([message]) => String(message));
    expect(messages.some((m) => m.includes('TaskEvents.explode') && m.includes('listener boom'))).toBe(true);

    // The catch-all saw the job's life in order.
    const types = listener.typesOf.get(id) ?? [];
    expect(types.filter((type) => ['enqueued', 'claimed', 'completed'].includes(type))).toEqual([
      'enqueued',
      'claimed',
      'completed',
    ]);
  });

  it('reports a result too large for the event as omitted; the job row still has it', async () => {
    const id = await queues.enqueue(queue, { n: 5, big: true });
    const event = await listener.completed.get(id).promise;
    expect(event.omitted).toContain(id);
    expect(event.results[event.ids.indexOf(id)]).toBeUndefined();
    const view = await queues.getJob(queue, id);
    expect(view?.result).toMatchObject({ doubled: 10 });
  });

  it('gets failed and dead payloads with the attempt and the error text, on one stacked method', async () => {
    const flaky = await queues.enqueue(queue, { n: 7, flaky: true }, { maxAttempts: 2 });
    const failed = await listener.failures.get(`failed ${flaky} #1`).promise;
    expect(failed).toMatchObject({ type: 'failed', id: flaky, attempt: 1 });
    expect(failed.error).toContain('flaky 7 on attempt 1');
    const dead = await listener.failures.get(`dead ${flaky} #2`).promise;
    expect(dead).toMatchObject({ type: 'dead', ids: [flaky], attempt: 2 });
    expect(dead.error).toContain('flaky 7 on attempt 2');

    const fatal = await queues.enqueue(queue, { n: 8, fatal: true });
    const straight = await listener.failures.get(`dead ${fatal} #1`).promise;
    expect(straight.error).toContain('cannot double 8');
  });

  it('gets progress, retried and removed payloads through the catch-all', async () => {
    const reporting = await queues.enqueue(queue, { n: 2, progress: true });
    const progress = await listener.arrivals.get(`progress ${reporting} #1`).promise;
    expect(progress).toMatchObject({ type: 'progress', id: reporting, progress: { step: 1, of: 2 } });

    const fatal = await queues.enqueue(queue, { n: 9, fatal: true });
    await listener.arrivals.get(`dead ${fatal} #1`).promise;
    await queues.retry(queue, fatal);
    await expect(listener.arrivals.get(`retried ${fatal} #1`).promise).resolves.toMatchObject({
      type: 'retried',
      id: fatal,
    });
    await listener.arrivals.get(`dead ${fatal} #2`).promise;
    await queues.remove(queue, fatal);
    await expect(listener.arrivals.get(`removed ${fatal} #1`).promise).resolves.toMatchObject({
      type: 'removed',
      id: fatal,
      from: 'dead',
    });
  });

  it('after app.close no method is called and the reader is closed', async () => {
    expect(await producerConnections()).toBeGreaterThan(0);
    await producer.close();
    producerClosed = true;
    const callsAtClose = listener.calls;
    // A closed socket leaves CLIENT LIST a moment after the client let it go: nothing to await.
    await waitUntil(async () => (await producerConnections()) === 0, 'the producer closed its connections');

    // The worker app still runs jobs; its own wait sees the completion the closed app must not.
    const workerQueues = worker.get(QueueService);
    const id = await workerQueues.enqueue(queue, { n: 4 });
    await expect(workerQueues.waitFor(queue, id, 10_000)).resolves.toEqual({ doubled: 8 });
    expect(listener.calls).toBe(callsAtClose);
    expect(listener.typesOf.has(id)).toBe(false);
  });
});
