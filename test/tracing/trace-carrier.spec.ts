import * as api from '@opentelemetry/api';
import { TRACE_CONTEXT_MAX_BYTES } from '@app/echomq/scripts/limits';
import type { OtelApi } from '@app/echomq/tracing/otel-api';
import { injectedCarrier } from '@app/echomq/tracing/trace-carrier';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

/** The API with a propagator that injects exactly `headers` (or throws). */
function injecting(headers: Record<string, string> | Error): OtelApi {
  const propagation = {
    inject(_context: api.Context, carrier: Record<string, string>) {
      if (headers instanceof Error) throw headers;
      Object.assign(carrier, headers);
    },
  };
  return { ...api, propagation } as unknown as OtelApi;
}

/** A tracestate that makes the carrier's JSON exactly `bytes` long. */
function tracestateFor(bytes: number): string {
  const bare = JSON.stringify({ traceparent: TRACEPARENT, tracestate: '' });
  return 'x'.repeat(bytes - Buffer.byteLength(bare));
}

/**
 * What a job's row carries as 'tc': the propagator's headers as JSON, at most
 * TRACE_CONTEXT_MAX_BYTES; a larger context keeps only its traceparent, else nothing.
 */
describe('the trace context a job carries (injectedCarrier)', () => {
  const carried = (headers: Record<string, string> | Error) =>
    injectedCarrier(injecting(headers), api.ROOT_CONTEXT);

  it('is what the propagator injects, as JSON, up to exactly the limit', () => {
    expect(carried({ traceparent: TRACEPARENT })).toBe(JSON.stringify({ traceparent: TRACEPARENT }));
    const full = { traceparent: TRACEPARENT, tracestate: tracestateFor(TRACE_CONTEXT_MAX_BYTES) };
    const text = carried(full);
    expect(Buffer.byteLength(text!)).toBe(TRACE_CONTEXT_MAX_BYTES);
    expect(text).toBe(JSON.stringify(full));
  });

  it('one byte over the limit keeps only the traceparent', () => {
    const over = { traceparent: TRACEPARENT, tracestate: tracestateFor(TRACE_CONTEXT_MAX_BYTES + 1) };
    expect(carried(over)).toBe(JSON.stringify({ traceparent: TRACEPARENT }));
  });

  it('over the limit without a traceparent, or with one too large itself, carries nothing', () => {
    expect(carried({ b3: 'x'.repeat(TRACE_CONTEXT_MAX_BYTES) })).toBeUndefined();
    expect(carried({ traceparent: 'x'.repeat(TRACE_CONTEXT_MAX_BYTES) })).toBeUndefined();
  });

  it('nothing injected, or a propagator that throws, carries nothing (and does not throw)', () => {
    expect(carried({})).toBeUndefined();
    expect(carried(new Error('inject failed'))).toBeUndefined();
  });
});
