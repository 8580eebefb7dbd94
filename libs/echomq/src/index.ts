// The supported public surface of EchoMQ. Anything not exported here is internal and may
// change in any release; `@echomq/nestjs/internal` exposes it for tools and tests only.

// The module and its options.
export { EchoMqModule } from './module/echomq.module';
export { ECHOMQ_OPTIONS } from './module/module-definition';
export type {
  EchoMqModuleOptions,
  EchoMqConnection,
  ReaperOptions,
  DurableOptions,
  ResolvedModuleSettings,
} from './module/echomq-options';

// Producing and administering jobs.
export {
  defineQueue,
  type QueueDefinition,
  type QueueSchemas,
  type QueueRef,
  type DataOf,
  type InputOf,
  type ResultOf,
} from './queue/queue-definition';
export { QueueService } from './queue/queue.service';
export { QueueHandle } from './queue/queue-handle';
export { InjectQueue, queueToken } from './module/queue-feature';
export type { QueueOptions, BackoffPolicy, ResolvedQueueOptions } from './queue/queue-options';
export type { EnqueueOptions, JobToEnqueue, JobBackoffPolicy } from './queue/enqueue-options';
export type { JobView } from './queue/job-view';
export type { JobState } from './scripts/job-view';
export type { BrowseOptions, QueueCounts } from './queue/reads';
export type { RemovedFrom } from './scripts/remove';
export { STATE_SETS, type StateSet } from './keyspace/keyspace';
export { isValidQueueName } from './keyspace/queue-name';

export { Schedule } from './schedules/schedule.decorator';
export type {
  ScheduleSpec,
  ScheduleOptions,
  ScheduleTemplate,
  ScheduleView,
  ScheduleListOptions,
  ScheduleDeclaration,
  DeclaredSchedule,
  UpsertScheduleResult,
} from './schedules/schedule-types';
// Schedules.

// Job control.
export type { DrainOptions } from './queue/job-control/drain-queue';
export type { CleanOptions } from './queue/job-control/clean-jobs';
export type { ObliterateOptions } from './queue/job-control/obliterate-queue';
export type { RetryAllOptions } from './queue/job-control/retry-all-dead';
export type { JobPatch } from './queue/job-control/update-patch';
export type { CleanState } from './scripts/clean';
export type { UpdatedJobState } from './scripts/update-job';
export { QueueBusyError, ObliterateStoppedError, type ObliterateStopReason } from './errors';
// Job control.

export type { DebounceOptions, ThrottleOptions, EnqueueResult } from './queue/dedupe-options';
export type { EnqueueOutcomeKind } from './scripts/enqueue-keyed';
// Deduplication.

export { JOB_LOG_LINES_KEPT, JOB_LOG_LINE_MAX_BYTES } from './scripts/job-log';
// Job logs and cancellation.

export type { DeadRetention } from './scripts/dead-retention';
export {
  RECENT_COMPLETED_MAX,
  type RecentCompletedOptions,
  type RecentCompletion,
} from './queue/recent-completed';
// Retention and history.

// Job ids.
export { isJobId, compareIds, snowflakeParts, type JobId, type SnowflakeParts } from './ids';

// Processing jobs.
export {
  Processor,
  Handle,
  type HandlerOf,
  type ProcessorFit,
  type TypedClassDecorator,
  type TypedMethodDecorator,
} from './worker/processor.decorator';
export type { Job, JobHandler } from './worker/job';

// Metrics (docs/operations.md); the health indicator is in the `@echomq/nestjs/health` entry.
export { EchoMqMetrics } from './metrics/echomq-metrics';
export { LANES_REPORTED_MAX } from './metrics/redis-metrics';
export { SNAPSHOT_MAX_AGE_MS, SNAPSHOT_BUDGET_MS, QUEUES_READ_AT_ONCE } from './metrics/redis-snapshot';

// Events.
export type { QueueEvent, QueueEventListener } from './queue/queue-events';
export type { WorkerEvents } from './worker/job-runner';
export { QueueEventsListener, OnQueueEvent } from './events/queue-events-listener.decorator';
export { OnWorkerEvent } from './events/on-worker-event.decorator';
export { parseQueueEvent } from './events/parse-queue-event';
export {
  QUEUE_EVENT_TYPES,
  type QueueEventType,
  type QueueEventPayloads,
  type AnyQueueEvent,
  type EnqueuedEvent,
  type ClaimedEvent,
  type ExtendedEvent,
  type CompletedEvent,
  type FailedEvent,
  type DeadEvent,
  type ReleasedEvent,
  type ReapedEvent,
  type PromotedEvent,
  type RetriedEvent,
  type RemovedEvent,
  type ProgressEvent,
  type ThrottledEvent,
  type LanePausedEvent,
  type LaneResumedEvent,
  type DebouncedEvent,
  type UpdatedEvent,
  type DrainedEvent,
  type CleanedEvent,
  type ObliteratedEvent,
  type TrimmedEvent,
  type ScheduleUpsertedEvent,
  type ScheduleRemovedEvent,
  type RepairedEvent,
  type UnrecognizedQueueEvent,
} from './events/queue-event-payloads';
export {
  WORKER_EVENT_TYPES,
  type WorkerEventType,
  type WorkerEventPayloads,
  type WorkerCompletedEvent,
  type WorkerFailedEvent,
  type WorkerStaleEvent,
  type WorkerThrottledEvent,
} from './events/worker-event-payloads';

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
  DataFormatError,
  RedisVersionError,
  JobDataInvalidError,
  JobResultInvalidError,
  ModuleImportedTwiceError,
  type SchemaIssue,
} from './errors';
export { RateLimitedError, type RateLimitedOptions, JobTimeoutError } from './flow-errors';
export { UnconfirmedWriteError, DurableWriteUnknownError } from './durability/durable-errors';
export {
  RedisOutOfMemoryError,
  EvictionPolicyError,
  NotReplicatedError,
  RedisCommandRefusedError,
} from './redis-errors';
export { NodeLeaseLostError } from './ids/node-lease-lost-error';

// HTTP: the exception filter that answers EchoMQ's errors with their status and `code`.
export { EchoMqExceptionFilter } from './http/echomq-exception.filter';
export { httpStatusOf, type EchoMqErrorBody } from './http/error-response';

// Flow control: lanes, priorities, shared limits (docs/flow-control.md, docs/options.md).
export type { FlowLimits, RateLimit } from './scripts/set-limits';
export type { LaneView } from './scripts/lane-reads';
export type { LaneSettings } from './queue/flow-admin';
export { DEFAULT_LANE, PRIORITY_MIN, PRIORITY_MAX, isValidLaneName } from './keyspace/lane-name';
