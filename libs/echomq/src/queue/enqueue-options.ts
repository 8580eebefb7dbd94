import { InvalidArgumentError, InvalidOptionError, PayloadTooLargeError } from '../errors';
import { jsonText } from '../json';
import {
  assertIdempotencyKey,
  assertLaneName,
  assertPriority,
  DEFAULT_LANE,
  DEFAULT_PRIORITY,
} from '../keyspace';
import type { NewJobRecord } from '../scripts';
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

export function serialisePayload(data: unknown, limitBytes: number): string {
  const text = jsonText(
    data === undefined ? null : data,
    (reason) => new InvalidArgumentError(`Job data must be JSON-serialisable: ${reason}`),
  );
  const bytes = Buffer.byteLength(text);
  if (bytes > limitBytes) throw new PayloadTooLargeError(bytes, limitBytes);
  return text;
}

function customRefused(): InvalidArgumentError {
  return new InvalidArgumentError(
    'backoff: a custom backoff function cannot be stored with a job; give a fixed or exponential ' +
      "policy, or set the function on the @Processor or in the queue's options",
  );
}

/**
 * The job's own backoff as the JSON its row keeps, checked with the ranges of the queue
 * option (as InvalidArgumentError, like every enqueue option); '' when it has none. Only the
 * policy's own fields are kept: nothing else of the object reaches Redis.
 */
export function serialiseBackoff(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'object' && value !== null && (value as { type?: unknown }).type === 'custom') {
    throw customRefused();
  }
  let policy: BackoffPolicy;
  try {
    policy = assertBackoff(value, 'backoff');
  } catch (error) {
    if (error instanceof InvalidOptionError) throw new InvalidArgumentError(error.message);
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
      throw customRefused();
  }
}

/** Validates options and builds the record the enqueue script takes; throws before anything is sent. */
export function buildJobRecord(id: string, job: JobToEnqueue, payloadLimitBytes: number): NewJobRecord {
  const name = job.name ?? '';
  if (typeof name !== 'string' || name.length > NAME_MAX) {
    throw new InvalidArgumentError(`A job name is a string of at most ${NAME_MAX} characters`);
  }
  const { min, max } = QUEUE_OPTION_RANGES.maxAttempts;
  const maxAttempts = job.maxAttempts;
  if (
    maxAttempts !== undefined &&
    (!isNonNegativeInteger(maxAttempts) || maxAttempts < min || maxAttempts > max)
  ) {
    throw new InvalidArgumentError(`maxAttempts must be an integer from ${min} to ${max}`);
  }
  const backoff = serialiseBackoff(job.backoff);
  const delayMs = job.delayMs ?? 0;
  if (!isNonNegativeInteger(delayMs))
    throw new InvalidArgumentError('delayMs must be a non-negative integer');
  let runAtMs = 0;
  if (job.runAt !== undefined) {
    runAtMs = job.runAt instanceof Date ? job.runAt.getTime() : job.runAt;
    if (!isNonNegativeInteger(runAtMs)) throw new InvalidArgumentError('runAt must be a valid date');
    // runAt wins over delayMs; the script reads 0 as "none", and any instant <= now means "now".
    runAtMs = Math.max(1, runAtMs);
  }
  const idempotencyKey = job.idempotencyKey === undefined ? '' : assertIdempotencyKey(job.idempotencyKey);
  const flow = flowFields(job);
  return {
    id,
    data: serialisePayload(job.data, payloadLimitBytes),
    name,
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(backoff === '' ? {} : { backoff }),
    delayMs: runAtMs > 0 ? 0 : delayMs,
    runAtMs,
    idempotencyKey,
    ...flow,
  };
}

/**
 * The job's lane, priority and own timeout, checked; each is left out when it is the
 * default, so the row of a job that uses none of them is written as before they existed.
 */
function flowFields(job: EnqueueOptions): Pick<NewJobRecord, 'lane' | 'priority' | 'timeoutMs'> {
  const lane = job.lane === undefined ? DEFAULT_LANE : assertLaneName(job.lane);
  const priority = job.priority === undefined ? DEFAULT_PRIORITY : assertPriority(job.priority);
  const { min, max } = QUEUE_OPTION_RANGES.timeoutMs;
  const timeoutMs = job.timeoutMs;
  if (timeoutMs !== undefined && (!isNonNegativeInteger(timeoutMs) || timeoutMs < min || timeoutMs > max)) {
    throw new InvalidArgumentError(`timeoutMs must be an integer from ${min} to ${max}`);
  }
  return {
    ...(lane === DEFAULT_LANE ? {} : { lane }),
    ...(priority === DEFAULT_PRIORITY ? {} : { priority }),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}
