import { InvalidArgumentError } from '../errors';
import { DEFAULT_LANE, DEFAULT_PRIORITY } from '../keyspace';
import { optionsOf } from '../option-checks';
import type { NewJobRecord } from '../scripts';
import type { DebounceOptions, ThrottleOptions } from './dedupe-options';
import {
  checkedIdempotencyKey,
  checkedLane,
  checkedOwnLimit,
  checkedPriority,
  fieldPath,
  isNonNegativeInteger,
  placeName,
  refusedValue,
  serialiseBackoff,
  serialisePayload,
  type JobPlace,
} from './job-fields';
import type { BackoffPolicy } from './queue-options';

export { serialiseBackoff, serialisePayload, type JobPlace } from './job-fields';

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

/** A record being put together: its optional settings are added one by one. */
type Writable<T> = { -readonly [K in keyof T]: T[K] };

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
export function checkEnqueueItem(job: unknown, at: JobPlace): JobToEnqueue {
  const place = placeName(at);
  const what = place === '' ? 'the job' : place;
  if (job === undefined) throw new InvalidArgumentError(`${what} must be an object, got undefined`);
  return optionsOf(job as JobToEnqueue, JOB_KEYS, what) as JobToEnqueue;
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
  at: JobPlace = '',
): NewJobRecord {
  checkEnqueueItem(job, at);
  const name = job.name === undefined ? '' : job.name;
  if (typeof name !== 'string' || name.length > NAME_MAX) {
    throw refusedValue(at, 'name', `a string of at most ${NAME_MAX} characters`, name);
  }
  const maxAttempts = checkedOwnLimit(job.maxAttempts, 'maxAttempts', at);
  const backoff = job.backoff === undefined ? '' : serialiseBackoff(job.backoff, fieldPath(at, 'backoff'));
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
  const lane = checkedLane(job.lane, at);
  const priority = checkedPriority(job.priority, at);
  const timeoutMs = checkedOwnLimit(job.timeoutMs, 'timeoutMs', at);
  // One object of one shape for a job with no settings of its own (the common case); a setting
  // is added only when the job has it, so a plain job's row is written as before it existed.
  const record: Writable<NewJobRecord> = {
    id,
    data: serialisePayload(job.data, payloadLimitBytes, at),
    name,
    delayMs: runAtMs > 0 ? 0 : delayMs,
    runAtMs,
    idempotencyKey,
  };
  if (maxAttempts !== undefined) record.maxAttempts = maxAttempts;
  if (backoff !== '') record.backoff = backoff;
  if (lane !== DEFAULT_LANE) record.lane = lane;
  if (priority !== DEFAULT_PRIORITY) record.priority = priority;
  if (timeoutMs !== undefined) record.timeoutMs = timeoutMs;
  return record;
}
