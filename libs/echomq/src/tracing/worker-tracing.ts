import type { Context, Link, Span, Tracer } from '@opentelemetry/api';
import type { RuntimeHooks, SettledOutcome, SettleVerb } from '../observability/runtime-hooks';
import type { ClaimedJobRecord } from '../scripts/claim';
import type { OtelApi } from './otel-api';
import {
  ATTR,
  claimedJobAttributes,
  exceptionOf,
  messageOf,
  operationAttributes,
  TRACER_NAME,
} from './span-attributes';
import { endJobSpans, endSettle, markFailed, type JobSpans } from './job-spans';
import { extractedContext } from './trace-carrier';
import { guarded } from './tracing-faults';

/**
 * The worker's spans (docs/tracing.md), as an observer of the worker runtime:
 * - `<queue> receive` (CLIENT) per claim that took jobs, from its first send to the hand-over,
 *   linked to each job's producer context (a batch has no single parent);
 * - `<queue> process` (CONSUMER) per handler call, a child of the job's producer context (so a
 *   request, its enqueue and the job's work read as one trace) and linked to it and to the
 *   receive span; the handler runs inside it, so the spans it makes are its children. A
 *   schedule's occurrence is linked only, starting a trace of its own: its context is the
 *   upsert's, which every occurrence carries, and one trace must not grow forever;
 * - `<queue> complete | fail | throttle | release` (CLIENT) per settlement, a child of the
 *   process span, with the attempt and how it ended; a fail has an error status and the
 *   handler's exception.
 * The process and settlement spans end when the runtime reports the settlement (settled).
 * Every call into the SDK is guarded (tracing-faults.ts): an SDK that throws costs spans,
 * never a handler call or a settlement.
 */
export class WorkerTracing implements RuntimeHooks {
  private readonly tracer: Tracer;
  private readonly jobs = new WeakMap<ClaimedJobRecord, JobSpans>();

  constructor(private readonly api: OtelApi) {
    this.tracer = api.trace.getTracer(TRACER_NAME);
  }

  claimed(
    queue: string,
    jobs: readonly ClaimedJobRecord[],
    roundTripMs: number,
    sentAtEpochMs: number,
  ): void {
    if (jobs.length === 0) return;
    guarded('a receive span', () => this.received(queue, jobs, roundTripMs, sentAtEpochMs), undefined);
  }

  private received(
    queue: string,
    jobs: readonly ClaimedJobRecord[],
    roundTripMs: number,
    sentAtEpochMs: number,
  ): void {
    const { api } = this;
    const links: Link[] = [];
    for (const job of jobs) {
      const producer = this.spansOf(job).producer;
      if (producer) links.push({ context: api.trace.getSpanContext(producer)! });
    }
    const span = this.tracer.startSpan(
      `${queue} receive`,
      {
        kind: api.SpanKind.CLIENT,
        startTime: sentAtEpochMs,
        links,
        attributes: {
          ...operationAttributes(queue, 'receive', 'receive'),
          ...(jobs.length === 1 ? { [ATTR.messageId]: jobs[0].id } : { [ATTR.batchCount]: jobs.length }),
        },
      },
      api.ROOT_CONTEXT,
    );
    for (const job of jobs) this.spansOf(job).receive = span.spanContext();
    span.end(sentAtEpochMs + roundTripMs);
  }

  aroundHandler<T>(queue: string, record: ClaimedJobRecord, run: () => Promise<T>): Promise<T> {
    const { api } = this;
    const started = guarded(
      'a process span (start)',
      () => {
        const spans = this.spansOf(record);
        const parent = this.parentOf(record, spans);
        const span = this.tracer.startSpan(
          `${queue} process`,
          {
            kind: api.SpanKind.CONSUMER,
            links: this.linksOf(spans),
            attributes: {
              ...operationAttributes(queue, 'process', 'process'),
              ...claimedJobAttributes(record),
            },
          },
          parent,
        );
        spans.process = span;
        return { spans, context: api.trace.setSpan(parent, span) };
      },
      undefined,
    );
    // No span (the SDK failed to make one): the handler runs as it would untraced.
    if (!started) return run();
    const { spans, context } = started;
    return api.context.with(context, run).catch((error: unknown) => {
      spans.thrown = { error };
      throw error;
    });
  }

  /**
   * Not async, and its span made inside a guard: a throw of the SDK here (a span processor's
   * onStart) must leave the settlement to run untraced, never skip it (the job would sit in
   * active until its lease ran out and be reaped as a crash).
   */
  aroundSettle<T>(
    queue: string,
    record: ClaimedJobRecord,
    verb: SettleVerb,
    run: () => Promise<T>,
  ): Promise<T> {
    const started = guarded(
      'a settlement span (start)',
      () => this.startSettle(queue, record, verb),
      undefined,
    );
    if (!started) return run();
    const { api } = this;
    const { spans, span, context } = started;
    // settled() ends the span with the outcome, right after this returns; should it not come,
    // the span still ends, a turn of the event loop later.
    const endLater = (): void => {
      setImmediate(() => {
        if (spans.settle === span) guarded('a settlement span (end)', () => endSettle(spans), undefined);
      });
    };
    return api.context.with(context, run).then(
      (value) => {
        endLater();
        return value;
      },
      (error: unknown) => {
        guarded(
          'a settlement span (status)',
          () => {
            span.recordException(exceptionOf(error));
            span.setStatus({ code: api.SpanStatusCode.ERROR, message: messageOf(error) });
          },
          undefined,
        );
        endLater();
        throw error;
      },
    );
  }

  settled(_queue: string, record: ClaimedJobRecord, outcome: SettledOutcome): void {
    const spans = this.jobs.get(record);
    if (!spans) return;
    this.jobs.delete(record);
    endJobSpans(this.api, spans, outcome);
  }

  /** The settlement's span, a child of the process span (or, with none, of the producer's context). */
  private startSettle(
    queue: string,
    record: ClaimedJobRecord,
    verb: SettleVerb,
  ): { spans: JobSpans; span: Span; context: Context } {
    const { api } = this;
    const spans = this.spansOf(record);
    const parent = spans.process
      ? api.trace.setSpan(api.ROOT_CONTEXT, spans.process)
      : this.parentOf(record, spans);
    const span = this.tracer.startSpan(
      `${queue} ${verb}`,
      {
        kind: api.SpanKind.CLIENT,
        links: spans.process ? [] : this.linksOf(spans),
        attributes: { ...operationAttributes(queue, 'settle', verb), ...claimedJobAttributes(record) },
      },
      parent,
    );
    if (verb === 'fail') markFailed(this.api, span, spans.thrown);
    // (one settlement per job; should a second one come, the first span ends now)
    endSettle(spans);
    spans.settle = span;
    return { spans, span, context: api.trace.setSpan(parent, span) };
  }

  private spansOf(record: ClaimedJobRecord): JobSpans {
    let spans = this.jobs.get(record);
    if (!spans) {
      spans = { producer: extractedContext(this.api, record.traceContext) };
      this.jobs.set(record, spans);
    }
    return spans;
  }

  /** The producer's context (a schedule's occurrence and a job without one: none, a new trace). */
  private parentOf(record: ClaimedJobRecord, spans: JobSpans): Context {
    return spans.producer && record.scheduleKey === undefined ? spans.producer : this.api.ROOT_CONTEXT;
  }

  private linksOf(spans: JobSpans): Link[] {
    const links: Link[] = [];
    if (spans.producer) links.push({ context: this.api.trace.getSpanContext(spans.producer)! });
    if (spans.receive) links.push({ context: spans.receive });
    return links;
  }
}
