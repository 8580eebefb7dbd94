import * as api from '@opentelemetry/api';
import { SpanStatusCode } from '@opentelemetry/api';
import { StaleJobError, type ClaimedJobRecord } from '@app/echomq/internal';
import { WorkerTracing } from '@app/echomq/tracing/worker-tracing';
import { TestTracing, traceparentOf } from './support/otel';

/**
 * The worker's observer on its own, for the paths a healthy worker seldom takes: a settlement
 * refused as stale, a settlement whose end is never reported, a settlement without a process
 * span, and an SDK that throws while the observer makes or ends a span.
 */
describe("the worker's tracing observer", () => {
  let tracing: TestTracing;
  let observer: WorkerTracing;
  let seq = 0;

  beforeAll(() => {
    tracing = TestTracing.install();
    observer = new WorkerTracing(api);
  });
  afterAll(() => tracing.uninstall());
  beforeEach(() => {
    tracing.exporter.reset();
    tracing.faults.reset();
  });

  /** The next turn of the event loop: after the observer's own fallback end of a settle span. */
  const nextTurn = () => new Promise((resolve) => setImmediate(() => setImmediate(resolve)));

  function record(): ClaimedJobRecord {
    seq += 1;
    return {
      id: `JOB0000000000${seq}`,
      attempt: 3,
      claimant: `c.${seq}`,
      data: '{"secret":"s3cr3t"}',
      name: 'mail',
      maxAttempts: 5,
      budgetBase: 0,
      backoff: null,
      lane: 'acme',
      priority: 0,
      timeoutMs: null,
      suspect: false,
    };
  }

  it('a stale settlement: the settle span records the refusal and says the lease was lost', async () => {
    const job = record();
    await observer.aroundHandler('q', job, async () => 'done');
    await expect(
      observer.aroundSettle('q', job, 'complete', () =>
        Promise.reject(new StaleJobError(job.id, job.attempt)),
      ),
    ).rejects.toBeInstanceOf(StaleJobError);
    observer.settled('q', job, 'stale');
    const [complete] = tracing.named('q complete');
    expect(complete.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: 'the lease was lost: the settlement changed nothing',
    });
    expect(complete.events.map((event) => event.name)).toEqual(['exception']);
    expect(complete.attributes).toMatchObject({
      'echomq.settlement.outcome': 'stale',
      'echomq.job.attempt': 3,
      'echomq.job.lane': 'acme',
      'echomq.job.name': 'mail',
    });
    // The handler succeeded: its process span is no failure.
    const [process] = tracing.named('q process');
    expect(process.status.code).toBe(SpanStatusCode.UNSET);
    expect(JSON.stringify([complete.attributes, process.attributes])).not.toContain('s3cr3t');
  });

  it('a settlement whose end is never reported still ends, a turn of the event loop later', async () => {
    const job = record();
    await observer.aroundSettle('q', job, 'release', async () => [true]);
    const release = await tracing.waitFor(() => tracing.named('q release')[0], 'the release span');
    expect(release.attributes['echomq.settlement.outcome']).toBeUndefined();
    expect(release.ended).toBe(true);
  });

  it('a throttle is no failure of the job, though its handler threw', async () => {
    const job = record();
    const limited = new Error('rate limited');
    await expect(observer.aroundHandler('q', job, () => Promise.reject(limited))).rejects.toBe(limited);
    await observer.aroundSettle('q', job, 'throttle', async () => undefined);
    observer.settled('q', job, 'throttled');
    expect(tracing.named('q process')[0].status.code).toBe(SpanStatusCode.UNSET);
    expect(tracing.named('q throttle')[0].status.code).toBe(SpanStatusCode.UNSET);
  });

  it("a settlement span the SDK cannot make (onStart throws): the settlement runs untraced, once, with run's outcome", async () => {
    tracing.faults.onStart = / complete$/;
    const job = record();
    await observer.aroundHandler('q', job, async () => 'done');
    let calls = 0;
    const settled = observer.aroundSettle('q', job, 'complete', async () => {
      calls += 1;
      return [true];
    });
    await expect(settled).resolves.toEqual([true]);
    expect(calls).toBe(1);
    expect(tracing.faults.thrown).toBe(1);
    observer.settled('q', job, 'completed');
    // The process span still ends, with the outcome.
    expect(tracing.named('q process')[0].attributes['echomq.settlement.outcome']).toBe('completed');
    expect(tracing.named('q complete')).toEqual([]);
  });

  it('a settle span whose end throws, ended by the fallback a turn later: nothing escapes', async () => {
    const escaped: unknown[] = [];
    const onUncaught = (error: unknown) => escaped.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      tracing.faults.onEnd = / release$/;
      await expect(observer.aroundSettle('q', record(), 'release', async () => [true])).resolves.toEqual([
        true,
      ]);
      await nextTurn();
      expect(tracing.faults.thrown).toBe(1);
      expect(escaped).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });

  it("a settlement without a process span is a child of the producer's context, and linked to it", async () => {
    const producer = tracing.tracer.startSpan('publish');
    producer.end();
    const job = {
      ...record(),
      traceContext: JSON.stringify({ traceparent: traceparentOf(producer.spanContext()) }),
    };
    await observer.aroundSettle('q', job, 'release', async () => [true]);
    observer.settled('q', job, 'released');
    const [release] = tracing.named('q release');
    expect(release.parentSpanContext?.spanId).toBe(producer.spanContext().spanId);
    expect(release.spanContext().traceId).toBe(producer.spanContext().traceId);
    expect(release.links.map((link) => link.context.spanId)).toEqual([producer.spanContext().spanId]);
    expect(release.attributes['echomq.settlement.outcome']).toBe('released');
    expect(release.status.code).toBe(SpanStatusCode.UNSET);
    expect(tracing.named('q process')).toEqual([]);
  });
});
