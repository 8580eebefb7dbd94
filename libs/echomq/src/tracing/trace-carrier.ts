import type { Context } from '@opentelemetry/api';
import { TRACE_CONTEXT_MAX_BYTES } from '../scripts/limits';
import type { OtelApi } from './otel-api';
import { tracingFault } from './tracing-faults';

/**
 * The trace context a job carries on its row (field 'tc'): what the application's global
 * propagator injects (W3C `traceparent` and `tracestate` by default, anything it is configured
 * with otherwise) as a JSON object of strings, at most TRACE_CONTEXT_MAX_BYTES. A context too
 * large for that keeps only its `traceparent`, which is what links the spans; one without a
 * traceparent that is still too large is not carried. undefined when there is nothing to carry
 * (no propagator registered, or no span in `context`), and when the propagator throws: a job is
 * never refused for its trace context, it is enqueued without one.
 */
export function injectedCarrier(api: OtelApi, context: Context): string | undefined {
  const carrier: Record<string, string> = {};
  try {
    api.propagation.inject(context, carrier);
  } catch (error) {
    tracingFault('the propagator (inject)', error);
    return undefined;
  }
  if (Object.keys(carrier).length === 0) return undefined;
  const text = JSON.stringify(carrier);
  if (Buffer.byteLength(text) <= TRACE_CONTEXT_MAX_BYTES) return text;
  const parent = carrier.traceparent;
  if (typeof parent !== 'string') return undefined;
  const cut = JSON.stringify({ traceparent: parent });
  return Buffer.byteLength(cut) <= TRACE_CONTEXT_MAX_BYTES ? cut : undefined;
}

/**
 * The producer's context from a row's 'tc', or undefined when the job has none or carries one
 * that does not parse or holds no valid span context (a row written by hand, a propagator
 * changed since): a job is never failed for its trace context, it just starts a trace of its own.
 */
export function extractedContext(api: OtelApi, text: string | undefined): Context | undefined {
  if (text === undefined || text === '') return undefined;
  let carrier: unknown;
  try {
    carrier = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof carrier !== 'object' || carrier === null || Array.isArray(carrier)) return undefined;
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(carrier)) if (typeof value === 'string') headers[key] = value;
  try {
    const context = api.propagation.extract(api.ROOT_CONTEXT, headers);
    const span = api.trace.getSpanContext(context);
    return span && api.trace.isSpanContextValid(span) ? context : undefined;
  } catch {
    // A propagator that throws on what it reads must not fail the job.
    return undefined;
  }
}
