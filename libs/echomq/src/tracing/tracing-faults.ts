import { Logger } from '@nestjs/common';
import { monotonicMs } from '../monotonic';

/** A fault of one kind is logged at most once in this long: a broken SDK fails on every span. */
const LOG_EVERY_MS = 60_000;

const logger = new Logger('EchoMQ:tracing');
const lastLogged = new Map<string, number>();

/**
 * Runs one call into the OpenTelemetry SDK (a span start or end, an attribute, a propagator)
 * and returns what it returns, or `fallback` when it throws. Tracing must never change what a
 * job or an enqueue does: a span processor whose onStart or onEnd throws, or a propagator that
 * throws, costs the spans, never the write or the settlement. The fault is logged, at most once
 * a minute for each `what`.
 */
export function guarded<T>(what: string, call: () => T, fallback: T): T {
  try {
    return call();
  } catch (error) {
    tracingFault(what, error);
    return fallback;
  }
}

/** Logs a fault of the SDK (see guarded). */
export function tracingFault(what: string, error: unknown): void {
  const now = monotonicMs();
  const last = lastLogged.get(what);
  if (last !== undefined && now - last < LOG_EVERY_MS) return;
  lastLogged.set(what, now);
  const message = error instanceof Error ? error.message : String(error);
  logger.warn(`Tracing: ${what} failed (${message}); jobs and enqueues go on without it`);
}
