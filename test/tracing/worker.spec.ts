import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { INestApplication } from '@nestjs/common';
import { Processor, QueueService, type Job } from '@app/echomq';
import { ProcessorExplorer, queueKeys } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { TestTracing } from './support/otel';

const queue = uniqueQueue('trace-worker');
let tracing: TestTracing;
/** The span active inside each job's handler (by job id), as the handler saw it. */
const activeInHandler = new Map<string, string | undefined>();

/** Completes, or throws while `data.fail` attempts remain; each run makes a span of its own. */
@Processor(queue, { concurrency: 4, maxAttempts: 2, backoff: { type: 'fixed', delayMs: 0 } })
class TracedProcessor {
  process(job: Job<{ fail?: number }>) {
    activeInHandler.set(job.id, trace.getActiveSpan()?.spanContext().spanId);
    tracing.tracer.startSpan('handler work').end();
    if (job.attempt <= (job.data.fail ?? 0)) throw new Error(`attempt ${job.attempt} failed`);
    return { ok: job.attempt };
  }
}

/** The worker's spans, end to end through a real worker: receive, process, and its settlement. */
describe('tracing a worker', () => {
  let app: INestApplication;
  let queues: QueueService;
  let redis: Redis;

  beforeAll(async () => {
    tracing = TestTracing.install();
    redis = connect();
    app = await bootApp([TracedProcessor], { tracing: true });
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
    await tracing.uninstall();
  });

  /** The spans of one job, once its settlement `verb` span ended `count` times. */
  async function spansOf(id: string, verb: string, count = 1): Promise<ReadableSpan[]> {
    return tracing.waitFor(() => {
      const spans = tracing.withAttribute('messaging.message.id', id);
      const settled = spans.filter((span) => span.name === `${queue} ${verb}`);
      const processed = spans.filter((span) => span.name === `${queue} process`);
      return settled.length >= count && processed.length >= count ? spans : undefined;
    }, `${verb} of ${id}`);
  }

  const only = (spans: ReadableSpan[], name: string) => {
    const found = spans.filter((span) => span.name === `${queue} ${name}`);
    expect(found).toHaveLength(1);
    return found[0];
  };

  it("joins the producer's trace: process is a child of publish, the handler's spans are its children", async () => {
    const { id, request } = await tracing.tracer.startActiveSpan('request', async (span) => {
      const enqueued = await queues.enqueue(queue, {});
      span.end();
      return { id: enqueued, request: span.spanContext() };
    });
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ ok: 1 });
    const spans = await spansOf(id, 'complete');
    const publish = only(spans, 'publish');
    const process = only(spans, 'process');
    const complete = only(spans, 'complete');
    const receives = tracing
      .named(`${queue} receive`)
      .filter((span) => span.links.some((link) => link.context.spanId === publish.spanContext().spanId));
    expect(receives).toHaveLength(1);
    const [receive] = receives;

    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.spanContext().traceId).toBe(request.traceId);
    expect(process.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(process.links.map((link) => link.context.spanId)).toEqual([
      publish.spanContext().spanId,
      receive.spanContext().spanId,
    ]);
    expect(process.attributes).toMatchObject({
      'messaging.system': 'echomq',
      'messaging.destination.name': queue,
      'messaging.operation.type': 'process',
      'messaging.message.id': id,
      'echomq.job.attempt': 1,
      'echomq.job.lane': 'default',
      'echomq.settlement.outcome': 'completed',
    });
    expect(process.status.code).toBe(SpanStatusCode.UNSET);
    const work = tracing
      .named('handler work')
      .find((span) => span.parentSpanContext?.spanId === process.spanContext().spanId);
    expect(work?.spanContext().traceId).toBe(request.traceId);

    expect(complete.parentSpanContext?.spanId).toBe(process.spanContext().spanId);
    expect(complete.attributes).toMatchObject({
      'messaging.operation.type': 'settle',
      'messaging.operation.name': 'complete',
      'echomq.job.attempt': 1,
      'echomq.settlement.outcome': 'completed',
    });
    expect(complete.status.code).toBe(SpanStatusCode.UNSET);

    expect(receive.kind).toBe(SpanKind.CLIENT);
    expect(receive.parentSpanContext).toBeUndefined();
    expect(receive.attributes['messaging.operation.type']).toBe('receive');
    // No job data in any attribute.
    for (const span of spans) expect(JSON.stringify(span.attributes)).not.toContain('"fail"');
  });

  it('a failed attempt has a fail span with an error status and the exception; its retry stays in the trace', async () => {
    const id = await tracing.tracer.startActiveSpan('request', async (span) => {
      const enqueued = await queues.enqueue(queue, { fail: 1 });
      span.end();
      return enqueued;
    });
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ ok: 2 });
    const spans = await spansOf(id, 'complete');
    const publish = only(spans, 'publish');
    const fail = only(spans, 'fail');
    const processes = spans.filter((span) => span.name === `${queue} process`);
    expect(processes.map((span) => span.attributes['echomq.job.attempt'])).toEqual([1, 2]);
    for (const process of processes) {
      expect(process.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    }
    expect(processes[0].status).toEqual({ code: SpanStatusCode.ERROR, message: 'attempt 1 failed' });
    expect(processes[0].attributes['echomq.settlement.outcome']).toBe('retried');
    expect(processes[1].status.code).toBe(SpanStatusCode.UNSET);

    expect(fail.parentSpanContext?.spanId).toBe(processes[0].spanContext().spanId);
    expect(fail.status).toEqual({ code: SpanStatusCode.ERROR, message: 'attempt 1 failed' });
    expect(fail.attributes).toMatchObject({
      'messaging.operation.name': 'fail',
      'echomq.job.attempt': 1,
      'echomq.settlement.outcome': 'retried',
    });
    const [exception] = fail.events;
    expect(exception.name).toBe('exception');
    expect(exception.attributes?.['exception.message']).toBe('attempt 1 failed');
    expect(only(spans, 'complete').attributes['echomq.job.attempt']).toBe(2);
  });

  it('a job out of attempts settles dead', async () => {
    const id = await queues.enqueue(queue, { fail: 2 });
    const spans = await spansOf(id, 'fail', 2);
    const outcomes = spans
      .filter((span) => span.name === `${queue} fail`)
      .map((span) => span.attributes['echomq.settlement.outcome']);
    expect(outcomes).toEqual(['retried', 'dead']);
  });

  it('a trace context on the row that does not parse does not break the job: it starts a trace of its own', async () => {
    const planted = ['not json', '{"traceparent":"00-zz-yy-01"}', '[1]', '{"traceparent":7}'];
    const keys = queueKeys(queue);
    // The span active where the worker itself runs, once each job completed (its own event,
    // emitted by the runner after the settlement, outside the handler).
    const activeInWorker = new Map<string, string | undefined>();
    const loop = app.get(ProcessorExplorer).loop(queue)!;
    const onCompleted = (id: string) => activeInWorker.set(id, trace.getActiveSpan()?.spanContext().spanId);
    loop.events.on('completed', onCompleted);
    // Paused, so no worker claims the jobs before their rows are rewritten.
    await queues.pause(queue);
    const ids = await queues.enqueueMany(
      queue,
      planted.map(() => ({ data: {} })),
    );
    for (const [index, id] of ids.entries()) await redis.hset(keys.job(id), 'tc', planted[index]);
    await queues.resume(queue);
    for (const id of ids) await expect(queues.waitFor(queue, id, 10_000)).resolves.toEqual({ ok: 1 });
    for (const id of ids) {
      const process = only(await spansOf(id, 'complete'), 'process');
      // Inside its handler the job's own process span is active, not an earlier job's.
      expect(activeInHandler.get(id)).toBe(process.spanContext().spanId);
      const create = only(tracing.withAttribute('messaging.message.id', id), 'create');
      expect(process.parentSpanContext).toBeUndefined();
      expect(process.spanContext().traceId).not.toBe(create.spanContext().traceId);
      // Linked to its claim's receive span only.
      expect(
        process.links.map(
          (link) => tracing.spans().find((span) => span.spanContext().spanId === link.context.spanId)?.name,
        ),
      ).toEqual([`${queue} receive`]);
      expect(process.attributes['echomq.settlement.outcome']).toBe('completed');
    }
    // Outside a handler no span is active: the worker does not leak a job's context.
    loop.events.off('completed', onCompleted);
    expect([...activeInWorker.entries()].sort()).toEqual(ids.map((id) => [id, undefined]).sort());
  });
});
