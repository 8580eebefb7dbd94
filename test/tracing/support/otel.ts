import { context, propagation, trace, type SpanContext } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/**
 * An OpenTelemetry SDK as an application registers one, exporting to memory: the global tracer
 * provider, an AsyncLocalStorage context manager and the W3C trace-context propagator. Each
 * jest file has globals of its own, so one file's SDK never sees another's spans.
 */
export class TestTracing {
  readonly exporter = new InMemorySpanExporter();
  private readonly provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(this.exporter)],
  });
  private readonly manager = new AsyncLocalStorageContextManager();

  static install(): TestTracing {
    const tracing = new TestTracing();
    context.setGlobalContextManager(tracing.manager.enable());
    trace.setGlobalTracerProvider(tracing.provider);
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    return tracing;
  }

  async uninstall(): Promise<void> {
    await this.provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  }

  /** The test's own tracer, for the spans a caller or a handler makes. */
  get tracer() {
    return trace.getTracer('echomq-test');
  }

  /** Ended spans so far. */
  spans(): ReadableSpan[] {
    return this.exporter.getFinishedSpans();
  }

  /** Ended spans of this name (`emails publish`, ...). */
  named(name: string): ReadableSpan[] {
    return this.spans().filter((span) => span.name === name);
  }

  /** Ended spans that carry this attribute value (messaging.message.id = a job's id, ...). */
  withAttribute(key: string, value: unknown): ReadableSpan[] {
    return this.spans().filter((span) => span.attributes[key] === value);
  }

  /** Polls until `find` returns a value other than undefined (spans end after the job settles). */
  async waitFor<T>(find: () => T | undefined, what: string, timeoutMs = 10_000): Promise<T> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const found = find();
      if (found !== undefined) return found;
      if (Date.now() > until) throw new Error(`timed out waiting for ${what}; spans: ${this.describe()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  describe(): string {
    return this.spans()
      .map((span) => `${span.name} ${span.spanContext().spanId}<-${span.parentSpanContext?.spanId ?? '-'}`)
      .join(', ');
  }
}

/** The W3C traceparent of a span context: what a job's row carries. */
export function traceparentOf(span: SpanContext): string {
  return `00-${span.traceId}-${span.spanId}-0${span.traceFlags}`;
}

/** The trace and parent span ids of a row's trace context ('tc'). */
export function parsedCarrier(text: string | undefined | null): { traceId: string; spanId: string } {
  if (!text) throw new Error('no trace context');
  const carrier = JSON.parse(text) as { traceparent?: string };
  const [, traceId, spanId] = (carrier.traceparent ?? '').split('-');
  return { traceId, spanId };
}
