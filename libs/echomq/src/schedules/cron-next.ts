import { Cron } from 'croner';
import { InvalidArgumentError } from '../errors';

/**
 * The one place EchoMQ asks a cron parser anything: "the first run of this pattern strictly
 * after instant t, in this time zone". croner does the parsing, the time zones and the DST
 * rules (a fixed-time run in a skipped hour moves to the first valid time after the gap; a
 * fixed-time run in a repeated hour runs once; runs of a wildcard or stepped hour field skip
 * the gap and run in both repeated hours). Nothing here parses cron text itself.
 */

/** Longest cron text accepted (croner's patterns are far shorter). */
export const CRON_TEXT_MAX = 256;

/** Parsed patterns by `tz pattern`, bounded: a process sees few distinct schedules. */
const parsed = new Map<string, Cron>();
const PARSED_MAX = 1_000;

function cronOf(pattern: string, tz: string): Cron {
  const cacheKey = `${tz} ${pattern}`;
  let cron = parsed.get(cacheKey);
  if (!cron) {
    // paused: the object only answers questions, it never starts a timer.
    cron = new Cron(pattern, { timezone: tz, paused: true });
    if (parsed.size >= PARSED_MAX) parsed.clear();
    parsed.set(cacheKey, cron);
  }
  return cron;
}

/** Whether `tz` is an IANA time zone this runtime knows (Intl refuses the others). */
export function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/**
 * The first run of `pattern` in `tz` strictly after `afterMs` (ms since epoch), or null when
 * the pattern has no run after it (a pattern limited to past years, or 30 February).
 */
export function cronRunAfter(pattern: string, tz: string, afterMs: number): number | null {
  const next = cronOf(pattern, tz).nextRun(new Date(afterMs));
  return next ? next.getTime() : null;
}

/**
 * Refuses a pattern croner cannot parse, an unknown time zone, or a pattern that never runs
 * after `nowMs`, as InvalidArgumentError (before anything is sent).
 */
export function assertCron(pattern: unknown, tz: unknown, nowMs: number = Date.now()): void {
  if (typeof pattern !== 'string' || pattern.trim() === '' || pattern.length > CRON_TEXT_MAX) {
    throw new InvalidArgumentError(`cron must be a cron pattern of 1 to ${CRON_TEXT_MAX} characters`);
  }
  if (typeof tz !== 'string' || !isTimeZone(tz)) {
    throw new InvalidArgumentError(
      `tz must be an IANA time zone such as 'Europe/Berlin', got ${JSON.stringify(tz)}`,
    );
  }
  let next: number | null;
  try {
    next = cronRunAfter(pattern, tz, nowMs);
  } catch (error) {
    throw new InvalidArgumentError(`cron '${pattern}' is not a valid pattern: ${(error as Error).message}`);
  }
  if (next === null) throw new InvalidArgumentError(`cron '${pattern}' never runs after now`);
}
