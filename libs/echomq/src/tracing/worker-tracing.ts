import type { Context, Link, Span, SpanContext, Tracer } from '@opentelemetry/api';
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
import { extractedContext } from './trace-carrier';

/** What the spans of one claimed job need to know of each other, from its claim to its settlement. */
interface JobSpans {
  /** The producer's context read from the job's row; undefined when it carries none (or a bad one). */
  readonly producer: Context | undefined;
  /** The claim's receive span. */
  receive?: SpanContext;
  process?: Span;
  /** What the handler threw, if it threw. */
  thrown?: { readonly error: unknown };
  settle?: Span;
}

/** Outcomes after which the attempt failed (the handler threw, timed out, or returned what cannot be stored). */
const FAILED: ReadonlySet<SettledOutcome> = new Set(['retried', 'dead']);
/** Outcomes in which the settlement changed nothing, or may not have. */
const NOT_RECORDED: Readonly<Partial<Record<SettledOutcome, string>>> = {
  stale: 'the lease was lost: the settlement changed nothing',
  unknown: 'the settlement was given up on: Redis may or may not have it',
};

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
    span.end(sentAtEpochMs + roundTripMs);
    for (const job of jobs) this.spansOf(job).receive = span.spanContext();
  }

  aroundHandler<T>(queue: string, record: ClaimedJobRecord, run: () => Promise<T>): Promise<T> {
    const { api } = this;
    const spans = this.spansOf(record);
    const parent = this.parentOf(record, spans);
    const span = this.tracer.startSpan(
      `${queue} process`,
      {
        kind: api.SpanKind.CONSUMER,
        links: this.linksOf(spans),
        attributes: { ...operationAttributes(queue, 'process', 'process'), ...claimedJobAttributes(record) },
      },
      parent,
    );
    spans.process = span;
    return api.context.with(api.trace.setSpan(parent, span), async () => {
      try {
        return await run();
      } catch (error) {
        spans.thrown = { error };
        throw error;
      }
    });
  }

  async aroundSettle<T>(
    queue: string,
    record: ClaimedJobRecord,
    verb: SettleVerb,
    run: () => Promise<T>,
  ): Promise<T> {
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
    if (verb === 'fail') this.failed(span, spans.thrown);
    // (one settlement per job; should a second one come, the first span ends now)
    this.endSettle(spans);
    spans.settle = span;
    try {
      return await api.context.with(api.trace.setSpan(parent, span), run);
    } catch (error) {
      span.recordException(exceptionOf(error));
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: messageOf(error) });
      throw error;
    } finally {
      // settled() ends it with the outcome, right after this returns; should it not come, the
      // span still ends, a turn of the event loop later.
      setImmediate(() => {
        if (spans.settle === span) this.endSettle(spans);
      });
    }
  }

  settled(_queue: string, record: ClaimedJobRecord, outcome: SettledOutcome): void {
    const spans = this.jobs.get(record);
    if (!spans) return;
    this.jobs.delete(record);
    const { api } = this;
    const settle = spans.settle;
    if (settle) {
      settle.setAttribute(ATTR.settlementOutcome, outcome);
      const notRecorded = NOT_RECORDED[outcome];
      if (notRecorded !== undefined)
        settle.setStatus({ code: api.SpanStatusCode.ERROR, message: notRecorded });
      this.endSettle(spans);
    }
    const process = spans.process;
    if (process) {
      process.setAttribute(ATTR.settlementOutcome, outcome);
      // A throttle (RateLimitedError) or a release at shutdown is no failure of the job.
      if (FAILED.has(outcome) || (spans.thrown && NOT_RECORDED[outcome] !== undefined)) {
        this.failed(process, spans.thrown);
      }
      process.end();
    }
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

  /** An error status, with the handler's exception when it threw (a timeout or a bad result did not). */
  private failed(span: Span, thrown: JobSpans['thrown']): void {
    if (thrown) span.recordException(exceptionOf(thrown.error));
    const message = thrown ? messageOf(thrown.error) : 'the attempt failed';
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message });
  }

  private endSettle(spans: JobSpans): void {
    spans.settle?.end();
    spans.settle = undefined;
  }
}
