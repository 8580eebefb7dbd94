import { describeValue, InvalidArgumentError } from '../errors';
import type { JobId } from '../ids';
import type { EnqueueOutcomeKind, KeyedRule } from '../scripts/enqueue-keyed';

/**
 * A job that waits `delayMs` and is replaced by later jobs with the same key while it waits:
 * each replaces its data (and name, if given) and pushes its run-at to now + delayMs, never
 * past `maxWaitMs` after the first one. The cap is the one of the call that created the job:
 * a later call's maxWaitMs (or its absence) does not change it (docs/deduplication.md).
 */
export interface DebounceOptions {
  /** 1 to 256 characters; one key means one waiting job per queue. */
  readonly key: string;
  /** How long the job waits after the latest enqueue with its key: 1 ms to 30 days. */
  readonly delayMs: number;
  /**
   * The latest the job runs, counted from the first enqueue: delayMs to 30 days. Absent: no
   * cap. Only the call that creates the job sets it; on a call that replaces a waiting job it
   * is checked but has no effect.
   */
  readonly maxWaitMs?: number;
}

/** At most one job per key per window; later ones in the window return the first job's id. */
export interface ThrottleOptions {
  /** 1 to 256 characters. */
  readonly key: string;
  /** The window opened by the job it admits: 1 ms to 30 days. */
  readonly windowMs: number;
}

/**
 * What submit did: `created` a new job; `matched` an existing one (an idempotency key or a
 * throttle window already held it); `replaced` the data of a waiting debounced job. `id` is
 * the job that will run.
 */
export interface EnqueueResult {
  readonly id: JobId;
  readonly outcome: EnqueueOutcomeKind;
}

/** Longest debounce delay, max wait and throttle window: a debounce or throttle key lives that long. */
export const DEDUPE_WINDOW_MAX_MS = 30 * 24 * 60 * 60 * 1000;
const KEY_MAX = 256;

interface KeyedFields {
  readonly debounce?: unknown;
  readonly throttle?: unknown;
  readonly idempotencyKey?: unknown;
  readonly delayMs?: unknown;
  readonly runAt?: unknown;
}

/** Whether a job asks for a debounce or a throttle (and so goes through the keyed enqueue). */
export function isKeyed(job: KeyedFields | null | undefined): boolean {
  return job?.debounce !== undefined || job?.throttle !== undefined;
}

function refused(field: string, rule: string, value: unknown): InvalidArgumentError {
  return new InvalidArgumentError(`${field} must be ${rule}, got ${describeValue(value)}`);
}

function windowMs(field: string, value: unknown, min = 1): number {
  if (
    typeof value !== 'number' ||
    !Number.isSafeInteger(value) ||
    value < min ||
    value > DEDUPE_WINDOW_MAX_MS
  ) {
    throw refused(field, `an integer from ${min} to ${DEDUPE_WINDOW_MAX_MS} (30 days)`, value);
  }
  return value;
}

function keyOf(field: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > KEY_MAX) {
    throw refused(field, `a string of 1 to ${KEY_MAX} characters`, value);
  }
  return value;
}

/** The option as an object of only the fields it has (a misspelt maxWaitMs must not pass unseen). */
function objectOf(field: string, value: unknown, fields: readonly string[]): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refused(field, `an object { ${fields.join(', ')} }`, value);
  }
  const unknown = Object.keys(value).find((name) => !fields.includes(name));
  if (unknown !== undefined) {
    throw new InvalidArgumentError(`${field} takes only ${fields.join(', ')}; got ${field}.${unknown}`);
  }
  return value as Record<string, unknown>;
}

/**
 * The job's debounce or throttle rule, checked (InvalidArgumentError before anything is sent),
 * or undefined for a plain job. A job carries at most one of idempotencyKey, debounce and
 * throttle, and a debounce decides the run-at, so it takes no delayMs or runAt.
 */
export function keyedRuleOf(job: KeyedFields): KeyedRule | undefined {
  const given = (['idempotencyKey', 'debounce', 'throttle'] as const).filter((f) => job[f] !== undefined);
  if (given.length > 1) {
    throw new InvalidArgumentError(
      `A job takes at most one of idempotencyKey, debounce and throttle; got ${given.join(' and ')}`,
    );
  }
  if (job.debounce !== undefined) {
    if (job.delayMs !== undefined || job.runAt !== undefined) {
      throw new InvalidArgumentError(
        'A debounced job takes no delayMs or runAt: debounce.delayMs decides when it runs',
      );
    }
    const debounce = objectOf('debounce', job.debounce, ['key', 'delayMs', 'maxWaitMs']);
    const delayMs = windowMs('debounce.delayMs', debounce.delayMs);
    const rule: KeyedRule = { kind: 'debounce', key: keyOf('debounce.key', debounce.key), delayMs };
    if (debounce.maxWaitMs === undefined) return rule;
    return { ...rule, maxWaitMs: windowMs('debounce.maxWaitMs', debounce.maxWaitMs, delayMs) };
  }
  if (job.throttle !== undefined) {
    const throttle = objectOf('throttle', job.throttle, ['key', 'windowMs']);
    return {
      kind: 'throttle',
      key: keyOf('throttle.key', throttle.key),
      windowMs: windowMs('throttle.windowMs', throttle.windowMs),
    };
  }
  return undefined;
}
