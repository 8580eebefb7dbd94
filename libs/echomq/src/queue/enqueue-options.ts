import { InvalidArgumentError, PayloadTooLargeError } from '../errors';
import { jsonText } from '../json';
import { assertIdempotencyKey } from '../keyspace';
import type { NewJobRecord } from '../scripts';

export interface EnqueueOptions {
  /** Routes the job to a @Handle(name) method; '' or absent uses process(). */
  readonly name?: string;
  /** Run no earlier than this many ms from now (server clock). */
  readonly delayMs?: number;
  /** Run no earlier than this instant. Wins over delayMs. */
  readonly runAt?: Date | number;
  /** Attempts per retry budget; defaults to the queue's setting. */
  readonly maxAttempts?: number;
  /** Enqueueing twice with one key (within the idempotency TTL) returns the first job's id. */
  readonly idempotencyKey?: string;
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

/** Validates options and builds the record the enqueue script takes; throws before anything is sent. */
export function buildJobRecord(
  id: string,
  job: JobToEnqueue,
  defaultMaxAttempts: number,
  payloadLimitBytes: number,
): NewJobRecord {
  const name = job.name ?? '';
  if (typeof name !== 'string' || name.length > NAME_MAX) {
    throw new InvalidArgumentError(`A job name is a string of at most ${NAME_MAX} characters`);
  }
  const maxAttempts = job.maxAttempts ?? defaultMaxAttempts;
  if (!isNonNegativeInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 1_000_000) {
    throw new InvalidArgumentError('maxAttempts must be an integer from 1 to 1000000');
  }
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
  return {
    id,
    data: serialisePayload(job.data, payloadLimitBytes),
    name,
    maxAttempts,
    delayMs: runAtMs > 0 ? 0 : delayMs,
    runAtMs,
    idempotencyKey,
  };
}
