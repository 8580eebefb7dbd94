import { cronRunAfter } from './cron-next';
import type { StoredDefinition } from './schedule-definition';

/**
 * The run-at of a schedule's next occurrence, on the server clock (`nowMs` from Redis TIME):
 *   - cron: the first run strictly after max(planned run-at of the previous occurrence, now),
 *     so a late advance never repeats a slot and never schedules one in the past;
 *   - everyMs: planned + k × everyMs, the first such instant after now (the phase is kept,
 *     missed intervals are not made up). Without a planned run-at (a new schedule, or an
 *     occurrence whose row is gone): now + everyMs.
 * Null when a cron pattern has no run left.
 */
export function nextRunAt(
  spec: StoredDefinition['spec'],
  plannedMs: number | null,
  nowMs: number,
): number | null {
  if ('cron' in spec) return cronRunAfter(spec.cron, spec.tz, Math.max(plannedMs ?? nowMs, nowMs));
  const every = spec.everyMs;
  if (plannedMs === null) return nowMs + every;
  if (plannedMs > nowMs) return plannedMs + every;
  return plannedMs + (Math.floor((nowMs - plannedMs) / every) + 1) * every;
}

/** Redis TIME's reply as ms since epoch. */
export function timeMs(reply: unknown): number {
  const [seconds, micros] = reply as [string, string];
  return Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
}
