import { describeValue, InvalidArgumentError, InvalidOptionError, PayloadTooLargeError } from '../errors';
import { jsonText } from '../json';
import {
  assertIdempotencyKey,
  assertLaneName,
  assertPriority,
  DEFAULT_LANE,
  DEFAULT_PRIORITY,
} from '../keyspace';
import { optionsOf, refusalDetail } from '../option-checks';
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

/** Every enqueue option, typed against EnqueueOptions so that a new option cannot be left out. */
const OPTION_KEY_SET: { readonly [K in keyof Required<EnqueueOptions>]: true } = {
  name: true,
  delayMs: true,
  runAt: true,
  maxAttempts: true,
  backoff: true,
  idempotencyKey: true,
  debounce: true,
  throttle: true,
  lane: true,
  priority: true,
  timeoutMs: true,
};

/** The keys an enqueue's options may have; an enqueueMany item has these and `data`. */
export const ENQUEUE_OPTION_KEYS = Object.keys(OPTION_KEY_SET) as readonly (keyof EnqueueOptions)[];
const JOB_KEYS: readonly string[] = ['data', ...ENQUEUE_OPTION_KEYS];

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

/**
 * The options of enqueue and submit: undefined (none) or a plain object of enqueue options.
 * Anything else (null, a number, an array, a function, an unknown key such as a misspelt
 * delayMS) throws InvalidArgumentError before anything is sent. A field set to null is refused
 * by that field's own rule when the job is built (only undefined means "the default").
 */
export function checkEnqueueOptions(options: unknown, what = 'enqueue options'): EnqueueOptions {
  return optionsOf(options as EnqueueOptions | undefined, ENQUEUE_OPTION_KEYS, what);
}

/**
 * One job of an enqueueMany (`at` is `jobs[3]`; '' for a job on its own): a plain object of
 * `data` and enqueue options, else InvalidArgumentError. A missing job (undefined) is refused
 * too: in a list of jobs it is a hole, not "no options".
 */
export function checkEnqueueItem(job: unknown, at: string): JobToEnqueue {
  const what = at === '' ? 'the job' : at;
  if (job === undefined) throw new InvalidArgumentError(`${what} must be an object, got undefined`);
  return optionsOf(job as JobToEnqueue, JOB_KEYS, what) as JobToEnqueue;
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
 * sent. `at` names the job in refusals (`jobs[3]`) when it is one of several in a call. Every
 * path to a job's row comes through here (enqueue, submit, enqueueMany, a schedule's template),
 * so the job's own shape is checked here too (checkEnqueueItem): no path can write a job with
 * an unknown option. Only undefined means "the default": a null option is refused by its
 * field's rule ("delayMs must be a non-negative integer, got null"), never read as absent.
 */
export function buildJobRecord(
  id: string,
  job: JobToEnqueue,
  payloadLimitBytes: number,
  at = '',
): NewJobRecord {
  checkEnqueueItem(job, at);
  const name = job.name === undefined ? '' : job.name;
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
  const delayMs = job.delayMs === undefined ? 0 : job.delayMs;
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
