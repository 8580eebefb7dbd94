import type { Context, Span, SpanContext } from '@opentelemetry/api';
import type { SettledOutcome } from '../observability/runtime-hooks';
import type { OtelApi } from './otel-api';
import { ATTR, exceptionOf, messageOf } from './span-attributes';
import { guarded } from './tracing-faults';

/** What the spans of one claimed job need to know of each other, from its claim to its settlement. */
export interface JobSpans {
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
 * The job's settlement ended so: its settlement span and its process span say how, and end
 * (each guarded on its own, so one the SDK fails to end does not keep the other open).
 */
export function endJobSpans(api: OtelApi, spans: JobSpans, outcome: SettledOutcome): void {
  const settle = spans.settle;
  if (settle) {
    guarded(
      'a settlement span (end)',
      () => {
        settle.setAttribute(ATTR.settlementOutcome, outcome);
        const notRecorded = NOT_RECORDED[outcome];
        if (notRecorded !== undefined)
          settle.setStatus({ code: api.SpanStatusCode.ERROR, message: notRecorded });
        endSettle(spans);
      },
      undefined,
    );
  }
  const process = spans.process;
  if (process) {
    guarded(
      'a process span (end)',
      () => {
        process.setAttribute(ATTR.settlementOutcome, outcome);
        // A throttle (RateLimitedError) or a release at shutdown is no failure of the job.
        if (FAILED.has(outcome) || (spans.thrown && NOT_RECORDED[outcome] !== undefined)) {
          markFailed(api, process, spans.thrown);
        }
        process.end();
      },
      undefined,
    );
  }
}

/** An error status, with the handler's exception when it threw (a timeout or a bad result did not). */
export function markFailed(api: OtelApi, span: Span, thrown: JobSpans['thrown']): void {
  if (thrown) span.recordException(exceptionOf(thrown.error));
  const message = thrown ? messageOf(thrown.error) : 'the attempt failed';
  span.setStatus({ code: api.SpanStatusCode.ERROR, message });
}

/** Ends the job's open settlement span, if any. */
export function endSettle(spans: JobSpans): void {
  const settle = spans.settle;
  spans.settle = undefined;
  settle?.end();
}
