import {
  DataFormatError,
  EchoMqError,
  InvalidArgumentError,
  InvalidJobIdError,
  InvalidOptionError,
  InvalidQueueNameError,
  JobAbortedError,
  JobDataInvalidError,
  JobExistsError,
  JobFailedError,
  JobNotFoundError,
  JobResultInvalidError,
  JobStateError,
  ModuleImportedTwiceError,
  OutcomeUnknownError,
  PayloadTooLargeError,
  ProcessorDefinitionError,
  QueueBusyError,
  ObliterateStoppedError,
  RedisUnavailableError,
  RedisVersionError,
  StaleJobError,
  UnrecoverableError,
  WaitTimeoutError,
} from '../errors';
import { JobTimeoutError, RateLimitedError } from '../flow-errors';
import { NodeLeaseLostError } from '../ids/node-lease-lost-error';
import { DurableWriteUnknownError, UnconfirmedWriteError } from '../durability/durable-errors';
import {
  EvictionPolicyError,
  NotReplicatedError,
  RedisCommandRefusedError,
  RedisOutOfMemoryError,
} from '../redis-errors';

/** How one error class is answered over HTTP. */
export interface HttpErrorMapping<E extends EchoMqError = EchoMqError> {
  readonly status: number;
  /**
   * Replaces the error's own message when that message holds what a client must not see
   * (a Redis address, a command name, a handler's error text). A 5xx without one is
   * answered 'Internal server error', so a new server fault can never leak by omission.
   */
  publicMessage?(error: E): string;
  /** Machine-readable fields a client can act on, sent next to `code`. */
  details?(error: E): Readonly<Record<string, unknown>>;
  /**
   * Seconds for a Retry-After header. Set only where a client repeating the request cannot
   * do the work twice (nothing was written), or where the answer is the upstream's own
   * "come back then" (a RateLimitedError).
   */
  retryAfterSeconds?(error: E): number;
}

/**
 * A hint, not a measurement: EchoMQ has already waited a command deadline before it
 * reports Redis unreachable, so a second is enough to keep clients from hammering it.
 */
const RETRY_AFTER_SECONDS = 1;

type ErrorClass<E extends EchoMqError> = abstract new (...args: never[]) => E;

function entry<E extends EchoMqError>(
  type: ErrorClass<E>,
  mapping: HttpErrorMapping<E>,
): [ErrorClass<EchoMqError>, HttpErrorMapping] {
  return [type, mapping];
}

/**
 * Every error class EchoMQ exports, with its answer. The status says whose move it is:
 * 4xx the client's (fix the request, or accept the state it found), 5xx the server's.
 * A test walks the exports and fails for a class missing here.
 */
const MAPPINGS: ReadonlyMap<ErrorClass<EchoMqError>, HttpErrorMapping> = new Map([
  // The request itself is malformed; nothing was written.
  entry(InvalidQueueNameError, { status: 400 }),
  entry(InvalidJobIdError, { status: 400 }),
  entry(InvalidArgumentError, { status: 400 }),
  entry(InvalidOptionError, { status: 400, details: (error) => ({ option: error.option }) }),
  entry(PayloadTooLargeError, {
    status: 413,
    details: (error) => ({ payloadBytes: error.bytes, limitBytes: error.limit }),
  }),
  // The queue's data schema refused the payload; its issues say where and why.
  entry(JobDataInvalidError, {
    status: 400,
    details: (error) => ({
      issues: error.issues,
      ...(error.index === undefined ? {} : { index: error.index }),
    }),
  }),

  // The request is fine; the job's state answers it.
  entry(JobNotFoundError, { status: 404, details: (error) => ({ jobId: error.id }) }),
  entry(JobExistsError, { status: 409, details: (error) => ({ jobId: error.id }) }),
  entry(JobStateError, {
    status: 409,
    details: (error) => ({ jobId: error.id, expectedState: error.expected }),
  }),
  // Workers still hold jobs of the queue an obliterate was asked for (without force).
  entry(QueueBusyError, {
    status: 409,
    details: (error) => ({ queue: error.queue, activeJobs: error.active }),
  }),
  // An obliterate that stopped part-way: what is left, and why (the message says what to do).
  entry(ObliterateStoppedError, {
    status: 409,
    details: (error) => ({
      queue: error.queue,
      activeJobs: error.active,
      reason: error.reason,
      removed: error.removed,
    }),
  }),
  // A claim that moved on (a remote worker whose lease was lost): it must drop the job.
  entry(StaleJobError, {
    status: 409,
    details: (error) => ({ jobId: error.id, attempt: error.attempt }),
  }),
  // The request was understood and its job ran, but ended dead. The handler's error text
  // was written for operators (it can name hosts, queries, paths), so it stays in the log
  // and on JobFailedError.lastError for an app that chooses to show it.
  entry(JobFailedError, {
    status: 422,
    publicMessage: (error) => `Job ${error.id} failed`,
    details: (error) => ({ jobId: error.id }),
  }),
  // The server waited on its upstream (the workers) and gave up: a gateway timeout. 408
  // would say the client was slow to send, and invite it to resend a request that already
  // enqueued its job.
  entry(WaitTimeoutError, {
    status: 504,
    publicMessage: (error) => error.message,
    details: (error) => ({ jobId: error.id, timeoutMs: error.timeoutMs }),
  }),

  // A handler's upstream limited it (an app that runs a job inside a request). The message
  // is the handler's, written for operators, so the client gets the hold and a fixed text,
  // and the hold again as Retry-After, in whole seconds rounded up (never sooner than asked).
  entry(RateLimitedError, {
    status: 429,
    publicMessage: () => 'Rate limited; try again later',
    details: (error) => ({ retryAfterMs: error.retryAfterMs, scope: error.scope }),
    retryAfterSeconds: (error) => Math.ceil(error.retryAfterMs / 1_000),
  }),

  // Redis, not the request: come back later.
  entry(RedisUnavailableError, {
    status: 503,
    publicMessage: () => 'Redis is unavailable; nothing was written. Try again later',
    retryAfterSeconds: () => RETRY_AFTER_SECONDS,
  }),
  entry(NodeLeaseLostError, {
    status: 503,
    publicMessage: () => 'No job id can be minted right now; nothing was written. Try again later',
    retryAfterSeconds: () => RETRY_AFTER_SECONDS,
  }),
  // No Retry-After: the call may have taken effect, and repeating a request that is not
  // idempotent (an enqueue without an idempotency key) would do its work twice.
  entry(OutcomeUnknownError, {
    status: 503,
    publicMessage: () => 'Redis did not answer in time: the request may or may not have taken effect',
  }),

  // Redis is full: nothing was written, and processing frees room, so another try is harmless.
  entry(RedisOutOfMemoryError, {
    status: 503,
    publicMessage: () => 'The queue is out of memory; nothing was written. Try again later',
    retryAfterSeconds: () => RETRY_AFTER_SECONDS,
  }),
  // Written on the master, not confirmed on its replicas. No Retry-After: without an
  // idempotency key a repeat enqueues again. The ids let a client check on its jobs.
  entry(NotReplicatedError, {
    status: 503,
    publicMessage: (error) =>
      `Written, but only ${error.acknowledged} of ${error.required} replicas confirmed it in time; it may be lost in a failover`,
    details: (error) => ({ ids: error.ids, acknowledged: error.acknowledged, required: error.required }),
  }),
  // A durable write run three times without a known outcome: as OutcomeUnknownError, no
  // Retry-After (a repeat without an idempotency key could enqueue again).
  entry(DurableWriteUnknownError, {
    status: 503,
    publicMessage: () => 'Redis did not answer in time: the request may or may not have taken effect',
  }),
  // Written on the master; whether its replicas have it could not be checked at all (the
  // confirmation connection down, the server shutting down). No Retry-After, as NotReplicatedError.
  entry(UnconfirmedWriteError, {
    status: 503,
    publicMessage: () => 'Written, but its replication could not be confirmed; it may be lost in a failover',
    details: (error) => ({ ids: error.ids, acknowledged: 0, required: error.required }),
  }),
  // The deployment's Redis user may not run a command a feature it turned on needs (WAIT, for
  // durable writes): only a change of its ACL mends that, so no Retry-After. A durable write
  // refused its confirmation is on the master; the ids let a client check on its jobs.
  entry(RedisCommandRefusedError, {
    status: 500,
    publicMessage: (error) =>
      error.written
        ? 'Written, but the server may not confirm it with the replicas (a deployment fault); it may be lost in a failover'
        : 'The server may not run a command this request needs (a deployment fault)',
    details: (error) => (error.written ? { ids: error.ids } : {}),
  }),
  // The deployment refuses its Redis (requireNoEviction); nothing was written.
  entry(EvictionPolicyError, {
    status: 503,
    publicMessage: () => 'The queue refuses to run on a Redis that may evict jobs; nothing was written',
  }),

  // This process is older than the queue's data (a rolling upgrade under way): a newer
  // instance can serve the request, and nothing was written, so another try is harmless.
  entry(DataFormatError, {
    status: 503,
    publicMessage: () =>
      "This server is older than the queue's data format; nothing was written. Try again later",
    retryAfterSeconds: () => RETRY_AFTER_SECONDS,
  }),

  // Worker-side, boot-time or deployment errors: reaching a request means a server fault.
  entry(ProcessorDefinitionError, { status: 500 }),
  entry(ModuleImportedTwiceError, { status: 500 }),
  entry(RedisVersionError, { status: 500 }),
  entry(UnrecoverableError, { status: 500 }),
  entry(JobResultInvalidError, { status: 500 }),
  entry(JobAbortedError, { status: 500 }),
  entry(JobTimeoutError, { status: 500 }),
  // Any other EchoMqError (a subclass this table does not know).
  entry(EchoMqError, { status: 500 }),
]);

/** The mapping of an error: its own class's, else the nearest mapped ancestor's (EchoMqError's at worst). */
export function httpMappingOf(error: EchoMqError): HttpErrorMapping {
  for (
    let proto: unknown = Object.getPrototypeOf(error);
    proto !== null;
    proto = Object.getPrototypeOf(proto)
  ) {
    const mapping = MAPPINGS.get((proto as { constructor: ErrorClass<EchoMqError> }).constructor);
    if (mapping) return mapping;
  }
  // Unreachable for a real EchoMqError; kept total for an object whose prototype was replaced.
  return MAPPINGS.get(EchoMqError) as HttpErrorMapping;
}

/** True when this exact class has its own entry (not only an inherited one): the totality check. */
export function hasOwnHttpMapping(type: unknown): boolean {
  return MAPPINGS.has(type as ErrorClass<EchoMqError>);
}
