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
import type { NewJobRecord } from '../scripts';
import type { DebounceOptions, ThrottleOptions } from './dedupe-options';
import { assertBackoff, QUEUE_OPTION_RANGES, type BackoffPolicy } from './queue-options';

/** A backoff a job can carry: it is stored on the job's row, so it is data, not a function. */
export type JobBackoffPolicy = Extract<BackoffPolicy, { readonly type: 'fixed' | 'exponential' }>;

export interface EnqueueOptions {
  /** Routes the job to a @Handle(name) method; '' or absent uses process(). */
  readonly name?: string;
  /** Run no earlier than this many ms from now (server clock). */
  readonly delayMs?: number;
  /** Run no earlier than this instant. Wins over delayMs. */
  readonly runAt?: Date | number;
  /**
   * This job's own attempts per retry budget (1 to 1,000,000). Without it the job takes the
   * maxAttempts of the worker that claims it, wherever it was enqueued (docs/options.md,
   * "Which settings a job runs with").
   */
  readonly maxAttempts?: number;
  /**
   * This job's own wait between attempts, instead of the serving worker's: a fixed or an
   * exponential policy, with the ranges of the queue option `backoff`. A custom function
   * cannot be stored with a job: set it on the @Processor or in the queue's options.
   */
  readonly backoff?: JobBackoffPolicy;
  /** Enqueueing twice with one key (within the idempotency TTL) returns the first job's id. */
  readonly idempotencyKey?: string;
  /**
   * The job waits delayMs; a later enqueue with the same key while it still waits replaces its
   * data (and name, if given) and pushes its run-at back, never past maxWaitMs after the first.
   * Not with idempotencyKey, throttle, delayMs or runAt; not in enqueueMany (docs/deduplication.md).
   */
  readonly debounce?: DebounceOptions;
  /**
   * At most one job per key per window: later enqueues in the window return the first job's id
   * (outcome 'matched'). Not with idempotencyKey or debounce; not in enqueueMany.
   */
  readonly throttle?: ThrottleOptions;
  /**
   * The lane the job waits in: 1 to 64 characters from A-Z a-z 0-9 _ . : @ + = -. Lanes (tenants,
   * customers) are served fairly against each other (docs/flow-control.md). Absent: 'default'.
   */
  readonly lane?: string;
  /** 0 to 9, higher claimed first; first in, first out within a level. Default 0. */
  readonly priority?: number;
  /**
   * This job's own timeout per attempt: 1 to 604,800,000 ms (7 days). It wins over the serving
   * worker's timeoutMs; at the deadline the attempt fails with JobTimeoutError.
   */
  readonly timeoutMs?: number;
}

export interface JobToEnqueue<T = unknown> extends EnqueueOptions {
  readonly data: T;
}

const NAME_MAX = 128;

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * A field's name in a refusal: `lane`, or `jobs[3].lane` for an item of an enqueueMany of
 * several jobs (`at` is then `jobs[3]`), so the caller knows which job to fix.
 */
function fieldPath(at: string, field: string): string {
  return at === '' ? field : `${at}.${field}`;
}

function refusedValue(at: string, field: string, rule: string, value: unknown): InvalidArgumentError {
  return new InvalidArgumentError(`${fieldPath(at, field)} must be ${rule}, got ${describeValue(value)}`);
}

export function serialisePayload(data: unknown, limitBytes: number, at = ''): string {
  const text = jsonText(
    data === undefined ? null : data,
    (reason) => new InvalidArgumentError(`${fieldPath(at, 'data')} must be JSON-serialisable: ${reason}`),
  );
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

/**
 * Validates options and builds the record the enqueue script takes; throws before anything is
 * sent. `at` names the job in refusals (`jobs[3]`) when it is one of several in a call.
 */
export function buildJobRecord(
  id: string,
  job: JobToEnqueue,
  payloadLimitBytes: number,
  at = '',
): NewJobRecord {
  const name = job.name ?? '';
  if (typeof name !== 'string' || name.length > NAME_MAX) {
    throw refusedValue(at, 'name', `a string of at most ${NAME_MAX} characters`, name);
  }
  const { min, max } = QUEUE_OPTION_RANGES.maxAttempts;
  const maxAttempts = job.maxAttempts;
  if (
    maxAttempts !== undefined &&
    (!isNonNegativeInteger(maxAttempts) || maxAttempts < min || maxAttempts > max)
  ) {
    throw refusedValue(at, 'maxAttempts', `an integer from ${min} to ${max}`, maxAttempts);
  }
  const backoff = serialiseBackoff(job.backoff, fieldPath(at, 'backoff'));
  const delayMs = job.delayMs ?? 0;
  if (!isNonNegativeInteger(delayMs)) throw refusedValue(at, 'delayMs', 'a non-negative integer', delayMs);
  let runAtMs = 0;
  if (job.runAt !== undefined) {
    runAtMs = job.runAt instanceof Date ? job.runAt.getTime() : job.runAt;
    if (!isNonNegativeInteger(runAtMs)) throw refusedValue(at, 'runAt', 'a valid date', job.runAt);
    // runAt wins over delayMs; the script reads 0 as "none", and any instant <= now means "now".
    runAtMs = Math.max(1, runAtMs);
  }
  const idempotencyKey =
    job.idempotencyKey === undefined ? '' : checkedIdempotencyKey(job.idempotencyKey, at);
  const flow = flowFields(job, at);
  return {
    id,
    data: serialisePayload(job.data, payloadLimitBytes, at),
    name,
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(backoff === '' ? {} : { backoff }),
    delayMs: runAtMs > 0 ? 0 : delayMs,
    runAtMs,
    idempotencyKey,
    ...flow,
  };
}

/** The keyspace's own check (its message says the rule), naming the job when there are several. */
function checkedIdempotencyKey(key: unknown, at: string): string {
  try {
    return assertIdempotencyKey(key);
  } catch (error) {
    if (at === '' || !(error instanceof InvalidArgumentError)) throw error;
    throw new InvalidArgumentError(`${fieldPath(at, 'idempotencyKey')}: ${error.message}`);
  }
}

/**
 * The job's lane, priority and own timeout, checked; each is left out when it is the
 * default, so the row of a job that uses none of them is written as before they existed.
 */
function flowFields(job: EnqueueOptions, at: string): Pick<NewJobRecord, 'lane' | 'priority' | 'timeoutMs'> {
  const lane = job.lane === undefined ? DEFAULT_LANE : assertLaneName(job.lane, fieldPath(at, 'lane'));
  const priority =
    job.priority === undefined ? DEFAULT_PRIORITY : assertPriority(job.priority, fieldPath(at, 'priority'));
  const { min, max } = QUEUE_OPTION_RANGES.timeoutMs;
  const timeoutMs = job.timeoutMs;
  if (timeoutMs !== undefined && (!isNonNegativeInteger(timeoutMs) || timeoutMs < min || timeoutMs > max)) {
    throw refusedValue(at, 'timeoutMs', `an integer from ${min} to ${max}`, timeoutMs);
  }
  return {
    ...(lane === DEFAULT_LANE ? {} : { lane }),
    ...(priority === DEFAULT_PRIORITY ? {} : { priority }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}
