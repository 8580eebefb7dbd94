import { describeValue, InvalidArgumentError, InvalidOptionError, PayloadTooLargeError } from '../errors';
import { jsonText } from '../json';
import {
  assertIdempotencyKey,
  assertLaneName,
  assertPriority,
  DEFAULT_LANE,
  DEFAULT_PRIORITY,
} from '../keyspace';
import { refusalDetail } from '../option-checks';
import { assertBackoff, QUEUE_OPTION_RANGES, type BackoffPolicy } from './queue-options';

/**
 * How each field of a new job is checked and encoded for its row (buildJobRecord puts them
 * together). Every refusal is an InvalidArgumentError naming the field, and the job when it is
 * one of several in a call.
 */

/**
 * Where a job sits in its call, as refusals name it: '' for a job on its own, a name such as
 * `jobs[3]`, or the job's index in an enqueueMany (named `jobs[3]` only when a refusal is
 * built, so a batch that passes every check builds no names).
 */
export type JobPlace = string | number;

export function placeName(at: JobPlace): string {
  return typeof at === 'number' ? `jobs[${at}]` : at;
}

/**
 * A field's name in a refusal: `lane`, or `jobs[3].lane` for an item of an enqueueMany of
 * several jobs, so the caller knows which job to fix.
 */
export function fieldPath(at: JobPlace, field: string): string {
  const place = placeName(at);
  return place === '' ? field : `${place}.${field}`;
}

export function refusedValue(
  at: JobPlace,
  field: string,
  rule: string,
  value: unknown,
): InvalidArgumentError {
  return new InvalidArgumentError(`${fieldPath(at, field)} must be ${rule}, got ${describeValue(value)}`);
}

export function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/** The job's data as JSON text, at most `limitBytes` of it (undefined is stored as null). */
export function serialisePayload(data: unknown, limitBytes: number, at: JobPlace = ''): string {
  const text = jsonText(
    data === undefined ? null : data,
    (reason) => new InvalidArgumentError(`${fieldPath(at, 'data')} must be JSON-serialisable: ${reason}`),
  );
  // A UTF-8 character is at most 3 bytes per UTF-16 unit, so a short text needs no count.
  if (text.length * 3 <= limitBytes) return text;
  const bytes = Buffer.byteLength(text);
  if (bytes > limitBytes) throw new PayloadTooLargeError(bytes, limitBytes);
  return text;
}

function customRefused(option: string): InvalidArgumentError {
  return new InvalidArgumentError(
    `${option}: a custom backoff function cannot be stored with a job; give a fixed or exponential ` +
      "policy, or set the function on the @Processor or in the queue's options",
  );
}

/**
 * The job's own backoff as the JSON its row keeps, checked with the ranges of the queue
 * option (as InvalidArgumentError, like every enqueue option); '' when it has none. Only the
 * policy's own fields are kept: nothing else of the object reaches Redis.
 */
export function serialiseBackoff(value: unknown, option = 'backoff'): string {
  if (value === undefined) return '';
  if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'custom') {
    throw customRefused(option);
  }
  let policy: BackoffPolicy;
  try {
    policy = assertBackoff(value, option);
  } catch (error) {
    // Named as an argument ("backoff.delayMs must be ..."), not as a boot option.
    if (error instanceof InvalidOptionError) {
      throw new InvalidArgumentError(`${error.option} ${refusalDetail(error)}`);
    }
    throw error;
  }
  switch (policy.type) {
    case 'fixed':
      return JSON.stringify({ type: 'fixed', delayMs: policy.delayMs });
    case 'exponential': {
      // JSON leaves out the fields that are undefined (their defaults apply when read).
      const { delayMs, maxDelayMs, jitter } = policy;
      return JSON.stringify({ type: 'exponential', delayMs, maxDelayMs, jitter });
    }
    default:
      throw customRefused(option);
  }
}

/** The keyspace's own check (its message says the rule), naming the job when there are several. */
export function checkedIdempotencyKey(key: unknown, at: JobPlace): string {
  try {
    return assertIdempotencyKey(key);
  } catch (error) {
    const place = placeName(at);
    if (place === '' || !(error instanceof InvalidArgumentError)) throw error;
    throw new InvalidArgumentError(`${fieldPath(place, 'idempotencyKey')}: ${error.message}`);
  }
}

/** The job's lane, checked; DEFAULT_LANE when it names none. */
export function checkedLane(lane: unknown, at: JobPlace): string {
  return lane === undefined ? DEFAULT_LANE : assertLaneName(lane, fieldPath(at, 'lane'));
}

/** The job's priority level, checked; DEFAULT_PRIORITY when it gives none. */
export function checkedPriority(priority: unknown, at: JobPlace): number {
  return priority === undefined ? DEFAULT_PRIORITY : assertPriority(priority, fieldPath(at, 'priority'));
}

/** A job's own maxAttempts or timeoutMs: undefined (none of its own), or an integer in the queue option's range. */
export function checkedOwnLimit(
  value: unknown,
  option: 'maxAttempts' | 'timeoutMs',
  at: JobPlace,
): number | undefined {
  if (value === undefined) return undefined;
  const { min, max } = QUEUE_OPTION_RANGES[option];
  if (!isNonNegativeInteger(value) || value < min || value > max) {
    throw refusedValue(at, option, `an integer from ${min} to ${max}`, value);
  }
  return value;
}
