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
  QueueBusyError,
  ObliterateStoppedError,
  JobTimeoutError,
  ModuleImportedTwiceError,
  NodeLeaseLostError,
  OutcomeUnknownError,
  PayloadTooLargeError,
  ProcessorDefinitionError,
  RateLimitedError,
  RedisUnavailableError,
  RedisVersionError,
  RedisOutOfMemoryError,
  EvictionPolicyError,
  NotReplicatedError,
  RedisCommandRefusedError,
  StaleJobError,
  UnrecoverableError,
  WaitTimeoutError,
  UnconfirmedWriteError,
  DurableWriteUnknownError,
} from '@app/echomq/internal';

/** One error as a route throws it, and the answer a client must get. */
export interface ErrorSample {
  readonly error: EchoMqError;
  readonly status: number;
  /** The public message; undefined means the error's own message. */
  readonly message?: string;
  readonly details?: Readonly<Record<string, unknown>>;
  readonly retryAfter?: string;
  /** Text of the error that must never reach the client. */
  readonly secret?: string;
}

const ID = 'JOB0Ah3kPz9QwE';
const INTERNAL = 'Internal server error';

/** A route error that is a JobNotFoundError to EchoMQ: it is answered as its ancestor is. */
export class TenantJobNotFoundError extends JobNotFoundError {}

/** One sample of every error class the library exports (a spec checks none is missing). */
export const ERROR_SAMPLES: readonly ErrorSample[] = [
  { error: new InvalidQueueNameError('a b'), status: 400 },
  { error: new InvalidJobIdError('JOB1'), status: 400 },
  { error: new InvalidArgumentError('limit must be an integer from 1 to 1000'), status: 400 },
  {
    error: new InvalidOptionError('queues.emails.concurrency', 'must be an integer from 1 to 1000'),
    status: 400,
    details: { option: 'queues.emails.concurrency' },
  },
  { error: new PayloadTooLargeError(600, 512), status: 413, details: { payloadBytes: 600, limitBytes: 512 } },
  {
    error: new JobDataInvalidError('orders', [{ message: 'Expected a number', path: ['amount'] }], 2),
    status: 400,
    details: { issues: [{ message: 'Expected a number', path: ['amount'] }], index: 2 },
  },
  {
    error: new JobDataInvalidError('orders', [{ message: 'Required', path: [] }]),
    status: 400,
    details: { issues: [{ message: 'Required', path: [] }] },
  },
  { error: new JobNotFoundError(ID), status: 404, details: { jobId: ID } },
  { error: new TenantJobNotFoundError(ID), status: 404, details: { jobId: ID } },
  { error: new JobExistsError(ID), status: 409, details: { jobId: ID } },
  { error: new JobStateError(ID, 'dead'), status: 409, details: { jobId: ID, expectedState: 'dead' } },
  { error: new QueueBusyError('emails', 2), status: 409, details: { queue: 'emails', activeJobs: 2 } },
  {
    error: new ObliterateStoppedError('emails', 0, 'producers', 1500),
    status: 409,
    details: { queue: 'emails', activeJobs: 0, reason: 'producers', removed: 1500 },
  },
  { error: new StaleJobError(ID, 3), status: 409, details: { jobId: ID, attempt: 3 } },
  {
    error: new JobFailedError(ID, 'Error: connect ECONNREFUSED 10.9.8.7:5432'),
    status: 422,
    message: `Job ${ID} failed`,
    details: { jobId: ID },
    secret: '10.9.8.7',
  },
  { error: new WaitTimeoutError(ID, 250), status: 504, details: { jobId: ID, timeoutMs: 250 } },
  {
    error: new RateLimitedError(1_500, { scope: 'lane', message: 'api.example.com answered 429' }),
    status: 429,
    message: 'Rate limited; try again later',
    details: { retryAfterMs: 1_500, scope: 'lane' },
    retryAfter: '2', // whole seconds, rounded up: never sooner than the hold
    secret: 'api.example.com',
  },
  { error: new JobTimeoutError(ID, 250), status: 500, message: INTERNAL, secret: ID },
  {
    error: new RedisUnavailableError('10.1.2.3:6379', 5000),
    status: 503,
    message: 'Redis is unavailable; nothing was written. Try again later',
    retryAfter: '1',
    secret: '10.1.2.3',
  },
  {
    error: new NodeLeaseLostError('unconfirmed', 7),
    status: 503,
    message: 'No job id can be minted right now; nothing was written. Try again later',
    retryAfter: '1',
    secret: 'node 7',
  },
  {
    error: new OutcomeUnknownError('EVALSHA enqueue', 'deadline of 5000 ms passed'),
    status: 503,
    message: 'Redis did not answer in time: the request may or may not have taken effect',
    secret: 'EVALSHA',
  },
  {
    error: new DataFormatError('orders', '9', 1),
    status: 503,
    message: "This server is older than the queue's data format; nothing was written. Try again later",
    retryAfter: '1',
    secret: 'format 9',
  },
  {
    error: new ProcessorDefinitionError('secret-processor-detail'),
    status: 500,
    message: INTERNAL,
    secret: 'secret',
  },
  { error: new ModuleImportedTwiceError(2), status: 500, message: INTERNAL, secret: 'forRoot' },
  {
    error: new RedisOutOfMemoryError('10.1.2.3:6379', 'EVALSHA enqueue'),
    status: 503,
    message: 'The queue is out of memory; nothing was written. Try again later',
    retryAfter: '1',
    secret: '10.1.2.3',
  },
  {
    error: new NotReplicatedError(0, 1, 1_000, [ID]),
    status: 503,
    message: 'Written, but only 0 of 1 replicas confirmed it in time; it may be lost in a failover',
    details: { ids: [ID], acknowledged: 0, required: 1 },
  },
  {
    error: new RedisCommandRefusedError(
      '10.1.2.3:6379',
      'WAIT',
      '+wait',
      'the module option durable',
      "NOPERM this user has no permissions to run the 'wait' command",
      true,
      [ID],
    ),
    status: 500,
    message:
      'Written, but the server may not confirm it with the replicas (a deployment fault); it may be lost in a failover',
    details: { ids: [ID] },
    secret: '10.1.2.3',
  },
  {
    error: new UnconfirmedWriteError(1, 1_000, [ID], 'the application is shutting down'),
    status: 503,
    message: 'Written, but its replication could not be confirmed; it may be lost in a failover',
    details: { ids: [ID], acknowledged: 0, required: 1 },
  },
  {
    error: new DurableWriteUnknownError(3),
    status: 503,
    message: 'Redis did not answer in time: the request may or may not have taken effect',
  },
  {
    error: new EvictionPolicyError('10.1.2.3:6379', 'allkeys-lru'),
    status: 503,
    message: 'The queue refuses to run on a Redis that may evict jobs; nothing was written',
    secret: '10.1.2.3',
  },
  {
    error: new RedisVersionError('10.1.2.3:6379', '6.0.0', '7.0.0'),
    status: 500,
    message: INTERNAL,
    secret: '10.1.2.3',
  },
  {
    error: new UnrecoverableError('secret-handler-detail'),
    status: 500,
    message: INTERNAL,
    secret: 'secret',
  },
  {
    error: new JobResultInvalidError('orders', [{ message: 'secret-result-detail', path: [] }]),
    status: 500,
    message: INTERNAL,
    secret: 'secret',
  },
  {
    error: new JobAbortedError(ID, 'shutdown', 'secret-abort-detail'),
    status: 500,
    message: INTERNAL,
    secret: 'secret',
  },
  {
    error: new EchoMqError('SOMETHING_NEW', 'secret-new-detail'),
    status: 500,
    message: INTERNAL,
    secret: 'secret',
  },
];

export type ErrorClass = abstract new (...args: never[]) => EchoMqError;

/** Every exported class that is EchoMqError or extends it, by name. */
export function errorClassesOf(exports: Readonly<Record<string, unknown>>): Map<string, ErrorClass> {
  const classes = new Map<string, ErrorClass>();
  for (const [name, value] of Object.entries(exports)) {
    if (typeof value !== 'function') continue;
    if (value === EchoMqError || value.prototype instanceof EchoMqError)
      classes.set(name, value as ErrorClass);
  }
  return classes;
}
