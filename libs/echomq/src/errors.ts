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
  /** `code` is for subclasses (failures that no retry can mend, such as invalid data). */
  constructor(message: string, code = 'UNRECOVERABLE') {
    super(code, message);
  }
}

/** The reason a job's AbortSignal fires: its lease is lost, it was removed, or the worker is shutting down. */
export class JobAbortedError extends EchoMqError {
  constructor(
    readonly id: string,
    readonly reason: 'lease-lost' | 'removed' | 'shutdown',
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
    /** Replaces the usual text where nothing was written for another reason (a replica refused it). */
    message?: string,
  ) {
    super(
      'REDIS_UNAVAILABLE',
      message ?? `Redis at ${target} was not reachable within ${waitedMs} ms; nothing was sent`,
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

/**
 * The queue's data is written in a format newer than this process knows (docs/upgrading.md):
 * a newer release bumped it. This process neither serves nor enqueues to that queue, so it
 * can never misread or half-write rows it does not understand. Nothing was written.
 */
export class DataFormatError extends EchoMqError {
  constructor(
    readonly queue: string,
    /** The format recorded in Redis, as stored. */
    readonly stored: string,
    /** The newest format this process reads and writes. */
    readonly known: number,
  ) {
    super(
      'DATA_FORMAT_UNSUPPORTED',
      `Queue '${queue}' is stored in data format ${shownFormat(stored)}, but this EchoMQ knows formats up to ` +
        `${known}: upgrade this process to a release that knows format ${shownFormat(stored)} ` +
        '(docs/upgrading.md); nothing was written',
    );
  }
}

/** A format number as it is; anything else (a key written by hand) quoted and cut short. */
function shownFormat(stored: string): string {
  return /^[0-9]{1,16}$/.test(stored) ? stored : describeValue(stored);
}

/** The Redis server is older than the oldest version EchoMQ's commands run on (docs/upgrading.md). */
export class RedisVersionError extends EchoMqError {
  constructor(
    readonly target: string,
    readonly version: string,
    readonly minimum: string,
  ) {
    super(
      'REDIS_VERSION_UNSUPPORTED',
      `Redis at ${target} is version ${version}; EchoMQ needs ${minimum} or newer (docs/upgrading.md)`,
    );
  }
}

/** True for errors after which repeating the same call is the way to learn its outcome. */
export function isTransientRedisError(error: unknown): error is OutcomeUnknownError | RedisUnavailableError {
  return error instanceof OutcomeUnknownError || error instanceof RedisUnavailableError;
}

/** One problem a Standard Schema reported: its message and where in the value. */
export interface SchemaIssue {
  readonly message: string;
  /** Property keys from the value's root to the offending part; empty for the root. */
  readonly path: readonly (string | number)[];
}

function describeIssues(issues: readonly SchemaIssue[]): string {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  return shown.join('; ') + (issues.length > 5 ? `; and ${issues.length - 5} more` : '');
}

/**
 * A payload its queue's data schema refuses. At enqueue nothing is written; at claim (data
 * written before the schema changed, or by a producer without it) the job goes to dead,
 * since no retry can make the data valid.
 */
export class JobDataInvalidError extends UnrecoverableError {
  constructor(
    readonly queue: string,
    readonly issues: readonly SchemaIssue[],
    /** The job's position in an enqueueMany call, when it came from one. */
    readonly index?: number,
  ) {
    super(
      `Job data for queue '${queue}'${index === undefined ? '' : ` (job ${index})`} does not match its schema: ${describeIssues(issues)}`,
      'INVALID_JOB_DATA',
    );
  }
}

/** A handler returned a value its queue's result schema refuses: the job goes to dead. */
export class JobResultInvalidError extends UnrecoverableError {
  constructor(
    readonly queue: string,
    readonly issues: readonly SchemaIssue[],
  ) {
    super(
      `The result of a job of queue '${queue}' does not match its schema: ${describeIssues(issues)}`,
      'INVALID_JOB_RESULT',
    );
  }
}

/**
 * EchoMqModule.forRoot() (or forRootAsync) was imported more than once in one application,
 * which would serve every processor once per import. Import it once, in the root module;
 * feature modules use EchoMqModule.forFeature() for their typed queue handles.
 */
export class ModuleImportedTwiceError extends EchoMqError {
  constructor(readonly imports: number) {
    super(
      'MODULE_IMPORTED_TWICE',
      `EchoMqModule.forRoot() is imported ${imports} times in this application; import it once, in the root ` +
        'module (it is global), and use EchoMqModule.forFeature([...queues]) in feature modules',
    );
  }
}

/**
 * The queue still has jobs in active (workers hold them), so obliterate refused: nothing was
 * written. Stop the workers first, or pass force to remove active jobs too (their handlers
 * are aborted).
 */
export class QueueBusyError extends EchoMqError {
  constructor(
    readonly queue: string,
    /** Jobs in active when the call was refused. */
    readonly active: number,
  ) {
    super(
      'QUEUE_BUSY',
      `Queue '${queue}' has ${active} active job${active === 1 ? '' : 's'}; stop its workers or obliterate with force`,
    );
  }
}

/** Why an obliterate stopped part-way. */
export type ObliterateStopReason = 'workers' | 'producers';

/**
 * An obliterate that stopped after its first call had written: its schedules are deleted and
 * part of its jobs removed. 'workers': a later call was refused because a worker holds a job
 * again (only possible once something resumed the queue the first call paused, so it is no
 * longer paused); 'producers': jobs kept coming in behind the calls for OBLITERATE_WALKS_MAX
 * walks over the lanes (the queue is left paused). Stop them, then call obliterate again: it goes
 * on from what is left. A QueueBusyError (409 over HTTP), so callers
 * that handle the refused first call handle this one too.
 */
export class ObliterateStoppedError extends QueueBusyError {
  constructor(
    queue: string,
    active: number,
    readonly reason: ObliterateStopReason,
    /** Jobs removed before it stopped. */
    readonly removed: number,
  ) {
    super(queue, active);
    const gone = `${removed} job${removed === 1 ? '' : 's'} gone`;
    this.message =
      reason === 'workers'
        ? `Obliterate of queue '${queue}' stopped part-way: it was resumed after obliterate paused ` +
          `it, and ${active} job${active === 1 ? ' is' : 's are'} active again. The queue is left ` +
          `partly removed (${gone}, its schedules deleted) and no longer paused; stop its workers ` +
          `(or pass force) and obliterate again.`
        : `Obliterate of queue '${queue}' stopped part-way: jobs kept being enqueued while it ran. ` +
          `The queue is left paused and partly removed (${gone}, its schedules deleted); stop ` +
          `its producers and obliterate again.`;
  }
}
