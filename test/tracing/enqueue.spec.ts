import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { INestApplication } from '@nestjs/common';
import { QueueService } from '@app/echomq';
import { claimJobs, queueKeys } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { parsedCarrier, TestTracing } from './support/otel';

/** The producer side of tracing: publish and create spans, and the context each job's row carries. */
describe('tracing an enqueue', () => {
  let tracing: TestTracing;
  let app: INestApplication;
  let queues: QueueService;
  let redis: Redis;

  beforeAll(async () => {
    tracing = TestTracing.install();
    redis = connect();
    app = await bootApp([], { tracing: true, startProcessors: false });
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
    await tracing.uninstall();
  });
  beforeEach(() => tracing.exporter.reset());

  const row = (queue: string, id: string) => redis.hget(queueKeys(queue).job(id), 'tc');

  it('makes a PRODUCER publish span, a child of the active span, whose context the job carries', async () => {
    const queue = uniqueQueue('trace-enqueue');
    const { id, caller } = await tracing.tracer.startActiveSpan('request', async (span) => {
      const enqueued = await queues.enqueue(queue, { to: 'a@example.com' }, { lane: 'acme' });
      span.end();
      return { id: enqueued, caller: span.spanContext() };
    });
    const [publish] = tracing.named(`${queue} publish`);
    expect(publish.kind).toBe(SpanKind.PRODUCER);
    expect(publish.parentSpanContext?.spanId).toBe(caller.spanId);
    expect(publish.spanContext().traceId).toBe(caller.traceId);
    expect(publish.attributes).toEqual({
      'messaging.system': 'echomq',
      'messaging.destination.name': queue,
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'publish',
      'messaging.message.id': id,
      'echomq.job.lane': 'acme',
      'echomq.enqueue.outcome': 'created',
    });
    expect(publish.status.code).toBe(SpanStatusCode.UNSET);
    // The row names the publish span: the consumer's spans join this trace.
    expect(parsedCarrier(await row(queue, id))).toEqual({
      traceId: caller.traceId,
      spanId: publish.spanContext().spanId,
    });
    // And the claim hands the context to the worker.
    const { jobs } = await claimJobs(app.get(QueueService).context(queue), {
      count: 1,
      leaseMs: 30_000,
      claimantPrefix: 'trace-claim',
    });
    expect(jobs.map((job) => [job.id, job.traceContext])).toEqual([[id, await row(queue, id)]]);
  });

  it('gives each job of enqueueMany a create span of its own, under one publish span', async () => {
    const queue = uniqueQueue('trace-many');
    const ids = await tracing.tracer.startActiveSpan('batch', async (span) => {
      const minted = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }, { data: 3, lane: 'b' }]);
      span.end();
      return minted;
    });
    const [publish] = tracing.named(`${queue} publish`);
    expect(publish.attributes['messaging.batch.message_count']).toBe(3);
    expect(publish.attributes['messaging.message.id']).toBeUndefined();
    const creates = tracing.named(`${queue} create`);
    expect(creates.map((span) => span.attributes['messaging.message.id'])).toEqual(ids);
    expect(creates.map((span) => span.attributes['echomq.job.lane'])).toEqual(['default', 'default', 'b']);
    for (const create of creates) {
      expect(create.kind).toBe(SpanKind.PRODUCER);
      expect(create.attributes['messaging.operation.type']).toBe('create');
      expect(create.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    }
    const carried = await Promise.all(ids.map(async (id) => parsedCarrier(await row(queue, id))));
    expect(carried).toEqual(
      creates.map((span) => ({ traceId: publish.spanContext().traceId, spanId: span.spanContext().spanId })),
    );
  });

  it('carries a context also when no span is active: the publish span starts the trace', async () => {
    const queue = uniqueQueue('trace-root');
    const id = await queues.enqueue(queue, { n: 1 });
    const [publish] = tracing.named(`${queue} publish`);
    expect(publish.parentSpanContext).toBeUndefined();
    expect(parsedCarrier(await row(queue, id)).spanId).toBe(publish.spanContext().spanId);
  });

  it('says what a keyed enqueue did, and a debounce that replaces keeps the first context', async () => {
    const queue = uniqueQueue('trace-keyed');
    const debounce = { key: 'user-7', delayMs: 60_000 };
    const first = await queues.submit(queue, { v: 1 }, { debounce });
    const firstContext = await row(queue, first.id);
    const second = await queues.submit(queue, { v: 2 }, { debounce });
    expect(second).toEqual({ id: first.id, outcome: 'replaced' });
    // Each publish names the job it came to: the one the debounce replaced, not the id it minted.
    expect(
      tracing
        .named(`${queue} publish`)
        .map((span) => [span.attributes['echomq.enqueue.outcome'], span.attributes['messaging.message.id']]),
    ).toEqual([
      ['created', first.id],
      ['replaced', first.id],
    ]);
    expect(parsedCarrier(firstContext).spanId).toBe(
      tracing.named(`${queue} publish`)[0].spanContext().spanId,
    );
    expect(await row(queue, first.id)).toBe(firstContext);
  });

  it('an idempotency key that matches writes nothing, and its publish span says matched', async () => {
    const queue = uniqueQueue('trace-idem');
    const id = await queues.enqueue(queue, { v: 1 }, { idempotencyKey: 'order-1' });
    const context = await row(queue, id);
    await expect(queues.enqueue(queue, { v: 2 }, { idempotencyKey: 'order-1' })).resolves.toBe(id);
    const outcomes = tracing
      .named(`${queue} publish`)
      .map((span) => [span.attributes['echomq.enqueue.outcome'], span.attributes['messaging.message.id']]);
    expect(outcomes).toEqual([
      ['created', id],
      ['matched', id],
    ]);
    expect(await row(queue, id)).toBe(context);
  });

  it("an enqueueMany's create spans end with the call, each naming the job its item came to", async () => {
    const queue = uniqueQueue('trace-many-idem');
    const existing = await queues.enqueue(queue, { v: 0 }, { idempotencyKey: 'order-2' });
    tracing.exporter.reset();
    const ids = await queues.enqueueMany(queue, [
      { data: 1 },
      { data: 2, idempotencyKey: 'order-2' },
      { data: 3, idempotencyKey: 'order-3' },
    ]);
    expect(ids[1]).toBe(existing);
    const creates = tracing.named(`${queue} create`);
    expect(
      creates.map((span) => [
        span.attributes['echomq.enqueue.outcome'],
        span.attributes['messaging.message.id'],
      ]),
    ).toEqual([
      ['created', ids[0]],
      ['matched', existing],
      ['created', ids[2]],
    ]);
    // The matched item wrote nothing: the job that was there keeps its own context.
    expect(parsedCarrier(await row(queue, existing)).spanId).not.toBe(creates[1].spanContext().spanId);
  });

  it('a refused enqueue ends its span with an error status and the exception, and starts no create span', async () => {
    const queue = uniqueQueue('trace-refused');
    await expect(queues.enqueueMany(queue, [{ data: 1 }, { data: 2, priority: 42 }])).rejects.toThrow(
      /priority/,
    );
    const [publish] = tracing.named(`${queue} publish`);
    expect(publish.status.code).toBe(SpanStatusCode.ERROR);
    expect(publish.events.map((event) => event.name)).toEqual(['exception']);
    expect(await redis.exists(queueKeys(queue).pending)).toBe(0);
    // No create span names a job that was never written (the first item passed its checks).
    expect(tracing.named(`${queue} create`)).toEqual([]);
    expect(publish.attributes['messaging.message.id']).toBeUndefined();
  });
});
