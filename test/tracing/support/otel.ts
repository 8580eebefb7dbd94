import {
  context,
  propagation,
  trace,
  type Context,
  type SpanContext,
  type TextMapSetter,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/**
 * Faults a test switches on in the SDK, as a broken span processor or propagator has them (an
 * SDK's MultiSpanProcessor does not catch them, so startSpan or span.end() throws). All off
 * unless set.
 */
export class SdkFaults {
  /** Spans whose name matches: the span processor's onStart throws (so startSpan throws). */
  onStart: RegExp | null = null;
  /** Spans whose name matches: the span processor's onEnd throws (so span.end() throws). */
  onEnd: RegExp | null = null;
  /** The propagator's inject throws. */
  inject = false;
  /** How many faults were thrown so far. */
  thrown = 0;

  reset(): void {
    this.onStart = null;
    this.onEnd = null;
    this.inject = false;
    this.thrown = 0;
  }

  throwIf(matches: boolean, what: string): void {
    if (!matches) return;
    this.thrown += 1;
    throw new Error(`${what} threw`);
  }
}

/** The span processor that throws when told to (placed before the exporting one). */
class FaultyProcessor implements SpanProcessor {
  constructor(private readonly faults: SdkFaults) {}
  onStart(span: Span): void {
    this.faults.throwIf(this.faults.onStart?.test(span.name) === true, `onStart of ${span.name}`);
  }
  onEnd(span: ReadableSpan): void {
    this.faults.throwIf(this.faults.onEnd?.test(span.name) === true, `onEnd of ${span.name}`);
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The W3C propagator, whose inject throws when told to. */
class FaultyPropagator extends W3CTraceContextPropagator {
  constructor(private readonly faults: SdkFaults) {
    super();
  }
  override inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    this.faults.throwIf(this.faults.inject, 'inject');
    super.inject(ctx, carrier, setter);
  }
}

/**
 * An OpenTelemetry SDK as an application registers one, exporting to memory: the global tracer
 * provider, an AsyncLocalStorage context manager and the W3C trace-context propagator. Each
 * jest file has globals of its own, so one file's SDK never sees another's spans. `faults`
 * makes its span processor or propagator throw, as a broken one does.
 */
export class TestTracing {
  readonly exporter = new InMemorySpanExporter();
  /** Faults to throw from the span processor or the propagator (none unless a test sets them). */
  readonly faults = new SdkFaults();
  private readonly provider = new BasicTracerProvider({
    spanProcessors: [new FaultyProcessor(this.faults), new SimpleSpanProcessor(this.exporter)],
  });
  private readonly manager = new AsyncLocalStorageContextManager();

  static install(): TestTracing {
    const tracing = new TestTracing();
    context.setGlobalContextManager(tracing.manager.enable());
    trace.setGlobalTracerProvider(tracing.provider);
    propagation.setGlobalPropagator(new FaultyPropagator(tracing.faults));
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
