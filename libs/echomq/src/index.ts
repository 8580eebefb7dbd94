// The supported public surface of EchoMQ. Anything not exported here is internal and may
// change in any release; `@echomq/nestjs/internal` exposes it for tools and tests only.

// The module and its options.
export { EchoMqModule } from './module/echomq.module';
export { ECHOMQ_OPTIONS } from './module/module-definition';
export type { EchoMqModuleOptions, EchoMqConnection, ReaperOptions } from './module/echomq-options';

// Producing and administering jobs.
export {
  defineQueue,
  type QueueDefinition,
  type QueueSchemas,
  type QueueRef,
  type DataOf,
  type ResultOf,
} from './queue/queue-definition';
export { QueueService } from './queue/queue.service';
export type { QueueOptions, BackoffPolicy } from './queue/queue-options';
export type { EnqueueOptions, JobToEnqueue } from './queue/enqueue-options';
export type { JobView } from './queue/job-view';
export type { JobState } from './scripts/job-view';
export type { BrowseOptions, QueueCounts } from './queue/reads';
export type { RemovedFrom } from './scripts/remove';
export { STATE_SETS, type StateSet } from './keyspace/keyspace';
export { isValidQueueName } from './keyspace/queue-name';

// Job ids.
export { isJobId, compareIds, snowflakeParts, type JobId, type SnowflakeParts } from './ids';

// Processing jobs.
export { Processor, Handle } from './worker/processor.decorator';
export type { Job, JobHandler } from './worker/job';

// Events.
export type { QueueEvent, QueueEventListener } from './queue/queue-events';
export type { WorkerEvents } from './worker/job-runner';

// Errors: every one carries a stable `code`.
export {
  EchoMqError,
  InvalidQueueNameError,
  InvalidJobIdError,
  InvalidArgumentError,
  PayloadTooLargeError,
  JobExistsError,
  JobNotFoundError,
  JobStateError,
  StaleJobError,
  UnrecoverableError,
  JobAbortedError,
  WaitTimeoutError,
  JobFailedError,
  ProcessorDefinitionError,
  OutcomeUnknownError,
  RedisUnavailableError,
  InvalidOptionError,
} from './errors';
export { NodeLeaseLostError } from './ids/node-lease-lost-error';
