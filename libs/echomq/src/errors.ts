/**
 * Typed errors. Every error EchoMQ raises on purpose is an EchoMqError with a
 * stable `code`, so callers (and the HTTP api) can map them without parsing text.
 */
export class EchoMqError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Describes a refused value for an error message without ever throwing (BigInt, cycles, symbols). */
export function describeValue(value: unknown): string {
  try {
    const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
    return text.length > 80 ? `${text.slice(0, 80)}...` : text;
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** A queue name that would break the key grammar or the cluster hashtag. */
export class InvalidQueueNameError extends EchoMqError {
  constructor(readonly queue: unknown) {
    super(
      'INVALID_QUEUE_NAME',
      `Invalid queue name ${describeValue(queue)}: use 1-64 characters from A-Z a-z 0-9 . _ -`,
    );
  }
}

export class InvalidJobIdError extends EchoMqError {
  constructor(readonly id: unknown) {
    super(
      'INVALID_JOB_ID',
      `Invalid job id ${describeValue(id)}: expected JOB followed by 11 Base62 characters`,
    );
  }
}

/** An option or argument out of range (a negative delay, a zero concurrency, ...). */
export class InvalidArgumentError extends EchoMqError {
  constructor(message: string) {
    super('INVALID_ARGUMENT', message);
  }
}

export class PayloadTooLargeError extends EchoMqError {
  constructor(
    readonly bytes: number,
    readonly limit: number,
  ) {
    super('PAYLOAD_TOO_LARGE', `Job payload is ${bytes} bytes; the limit is ${limit}`);
  }
}

export class JobExistsError extends EchoMqError {
  constructor(readonly id: string) {
    super('JOB_EXISTS', `Job ${id} already exists`);
  }
}

export class JobNotFoundError extends EchoMqError {
  constructor(readonly id: string) {
    super('JOB_NOT_FOUND', `Job ${id} was not found`);
  }
}

/** The job exists but is not in the state the operation needs (e.g. retry of a job that is not dead). */
export class JobStateError extends EchoMqError {
  constructor(
    readonly id: string,
    readonly expected: string,
  ) {
    super('JOB_STATE', `Job ${id} is not ${expected}`);
  }
}

/**
 * The caller's claim on a job is no longer current: the job left active, or its
 * token / claimant moved on (the lease expired and someone else claimed it).
 * Nothing was changed.
 */
export class StaleJobError extends EchoMqError {
  constructor(
    readonly id: string,
    readonly attempt: number,
  ) {
    super('STALE', `Claim ${attempt} on job ${id} is stale: the lease was lost or the job was removed`);
  }
}

/** Thrown by a handler to send its job straight to dead, skipping the remaining retries. */
export class UnrecoverableError extends EchoMqError {
  constructor(message: string) {
    super('UNRECOVERABLE', message);
  }
}

/** The reason a job's AbortSignal fires: its lease is lost, it was removed, or the worker is shutting down. */
export class JobAbortedError extends EchoMqError {
  constructor(
    readonly id: string,
    readonly reason: 'lease-lost' | 'shutdown',
    message: string,
  ) {
    super('JOB_ABORTED', message);
  }
}

/** waitFor gave up before the job finished. */
export class WaitTimeoutError extends EchoMqError {
  constructor(
    readonly id: string,
    readonly timeoutMs: number,
  ) {
    super('WAIT_TIMEOUT', `Job ${id} did not finish within ${timeoutMs} ms`);
  }
}

/** waitFor saw the job end in dead (or removed); carries its last error. */
export class JobFailedError extends EchoMqError {
  constructor(
    readonly id: string,
    readonly lastError: string,
  ) {
    super('JOB_FAILED', `Job ${id} failed: ${lastError}`);
  }
}

/** A @Processor class that cannot run (no handler, a second processor for one queue, bad options). */
export class ProcessorDefinitionError extends EchoMqError {
  constructor(message: string) {
    super('PROCESSOR_DEFINITION', message);
  }
}

/**
 * A call reached Redis, or may have, but no reply came back: its deadline passed or the
 * connection was lost with the call in flight. It may or may not have taken effect.
 * Every EchoMQ write is replay-safe, so repeating the call is safe (docs/reliability.md).
 */
export class OutcomeUnknownError extends EchoMqError {
  constructor(
    readonly command: string,
    readonly reason: string,
  ) {
    super(
      'OUTCOME_UNKNOWN',
      `No reply to ${command} (${reason}): it may or may not have taken effect; repeating the call is safe`,
    );
  }
}

/** Redis could not be reached in time, so the call was never sent: nothing was written. */
export class RedisUnavailableError extends EchoMqError {
  constructor(
    readonly target: string,
    readonly waitedMs: number,
  ) {
    super(
      'REDIS_UNAVAILABLE',
      `Redis at ${target} was not reachable within ${waitedMs} ms; nothing was sent`,
    );
  }
}

/** A module, queue or processor option outside its documented range; named so it can be fixed. */
export class InvalidOptionError extends EchoMqError {
  constructor(
    readonly option: string,
    message: string,
  ) {
    super('INVALID_OPTION', `Option ${option}: ${message}`);
  }
}

/** True for errors after which repeating the same call is the way to learn its outcome. */
export function isTransientRedisError(error: unknown): error is OutcomeUnknownError | RedisUnavailableError {
  return error instanceof OutcomeUnknownError || error instanceof RedisUnavailableError;
}
