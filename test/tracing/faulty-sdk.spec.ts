import type { INestApplication } from '@nestjs/common';
import { Processor, QueueService, type Job } from '@app/echomq';
import { queueKeys } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { TestTracing } from './support/otel';

const queue = uniqueQueue('trace-faulty');
let tracing: TestTracing;

/** Fails its first attempt when told to, and completes. */
@Processor(queue, { maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0 } })
class SteadyProcessor {
  process(job: Job<{ failFirst?: boolean }>) {
    if (job.data.failFirst && job.attempt === 1) throw new Error('first attempt failed');
    return { attempt: job.attempt };
  }
}

/**
 * An SDK that throws (a span processor whose onStart or onEnd throws, a propagator whose inject
 * throws) costs spans, never an enqueue or a settlement: an enqueue that was written must not
 * reject (its caller would repeat it and enqueue twice), and a job must settle as untraced.
 */
describe('tracing with an SDK that throws', () => {
  let app: INestApplication;
  let queues: QueueService;
  let redis: Redis;
  const escaped: unknown[] = [];
  const onUncaught = (error: unknown) => escaped.push(error);

  beforeAll(async () => {
    tracing = TestTracing.install();
    redis = connect();
    app = await bootApp([SteadyProcessor], { tracing: true });
    queues = app.get(QueueService);
    process.on('uncaughtException', onUncaught);
  });
  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await app.close();
    await redis.quit();
    await tracing.uninstall();
  });
  beforeEach(() => tracing.faults.reset());
  afterEach(() => expect(escaped).toEqual([]));

  /** A queue no processor serves: what the producer wrote stays where it is. */
  const producerQueue = () => uniqueQueue('trace-faulty-producer');
  const tc = (q: string, id: string) => redis.hget(queueKeys(q).job(id), 'tc');

  it('a span processor whose onEnd throws fails no enqueue, and each job is written once', async () => {
    tracing.faults.onEnd = / (publish|create)$/;
    const q = producerQueue();
    const one = await queues.enqueue(q, { n: 1 });
    const many = await queues.enqueueMany(q, [{ data: 2 }, { data: 3 }]);
    const keyed = await queues.submit(q, { n: 4 }, { debounce: { key: 'k', delayMs: 60_000 } });
    const schedule = await queues.upsertSchedule(q, 'tick', { everyMs: 3_600_000 }, { data: {} });
    expect(keyed.outcome).toBe('created');
    expect(schedule.outcome).toBe('created');
    // publish x4 and create x2 each threw at its end.
    expect(tracing.faults.thrown).toBe(6);
    const keys = queueKeys(q);
    expect((await redis.zrange(keys.pending, 0, -1)).sort()).toEqual([one, ...many].sort());
    expect((await redis.zrange(keys.schedule, 0, -1)).sort()).toEqual([keyed.id, schedule.nextId].sort());
    // The spans were made before their end threw: every job carries its context.
    for (const id of [one, ...many, keyed.id, schedule.nextId])
      expect(await tc(q, id)).toMatch(/traceparent/);
  });

  it('a span processor whose onStart throws: the job is enqueued, without a trace context', async () => {
    const q = producerQueue();
    tracing.faults.onStart = / publish$/;
    const one = await queues.enqueue(q, { n: 1 });
    const many = await queues.enqueueMany(q, [{ data: 2 }, { data: 3 }]);
    // A batch whose publish span was made, but not its jobs' create spans.
    tracing.faults.onStart = / create$/;
    const more = await queues.enqueueMany(q, [{ data: 4 }, { data: 5 }]);
    expect(tracing.faults.thrown).toBe(4);
    const all = [one, ...many, ...more];
    expect((await redis.zrange(queueKeys(q).pending, 0, -1)).sort()).toEqual(all.sort());
    for (const id of all) expect(await tc(q, id)).toBeNull();
    expect(
      tracing.named(`${q} publish`).map((span) => span.attributes['messaging.batch.message_count']),
    ).toEqual([2]);
  });

  it('a propagator whose inject throws: the job is enqueued without a trace context', async () => {
    tracing.faults.inject = true;
    const q = producerQueue();
    const one = await queues.enqueue(q, { n: 1 });
    const many = await queues.enqueueMany(q, [{ data: 2 }, { data: 3 }]);
    expect(tracing.faults.thrown).toBe(3);
    expect((await redis.zrange(queueKeys(q).pending, 0, -1)).sort()).toEqual([one, ...many].sort());
    for (const id of [one, ...many]) expect(await tc(q, id)).toBeNull();
    // The spans themselves are fine.
    expect(tracing.withAttribute('messaging.message.id', one).map((span) => span.name)).toEqual([
      `${q} publish`,
    ]);
  });

  it('a span processor whose onStart throws on every settlement span: every job still settles', async () => {
    tracing.faults.onStart = / (complete|fail)$/;
    const plain = await queues.enqueue(queue, {});
    const retried = await queues.enqueue(queue, { failFirst: true });
    await expect(queues.waitFor(queue, plain, 10_000)).resolves.toEqual({ attempt: 1 });
    await expect(queues.waitFor(queue, retried, 10_000)).resolves.toEqual({ attempt: 2 });
    // complete, complete and the fail between them: each started no span, each settled.
    expect(tracing.faults.thrown).toBe(3);
  });

  it('a span processor whose onStart throws on process spans: the handler still runs', async () => {
    tracing.faults.onStart = / process$/;
    const id = await queues.enqueue(queue, { failFirst: true });
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ attempt: 2 });
    expect(tracing.faults.thrown).toBe(2);
  });

  it('a span processor whose onEnd throws on the worker spans: jobs settle, and nothing escapes', async () => {
    tracing.faults.onEnd = / (receive|process|complete|fail)$/;
    const id = await queues.enqueue(queue, { failFirst: true });
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ attempt: 2 });
    expect(tracing.faults.thrown).toBeGreaterThanOrEqual(4);
  });
});
