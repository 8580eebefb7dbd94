// Internal: the building blocks under the public surface (script wrappers, the key
// builder, connections, the worker runtime). Exposed for this repository's own apps,
// benchmarks and tests; no stability promise is made for anything here.
export * from './index';
export * from './errors';
export * from './flow-errors';
export * from './redis-errors';
export * from './monotonic';
export * from './durability/durable-errors';
export * from './connection/server-config-check';
export { FullRedisNotice, FULL_REDIS_WARN_EVERY_MS } from './connection/full-redis-notice';
export * from './ids';
export * from './keyspace';
export * from './scripts';
export * from './queue/queue-options';
export * from './queue/enqueue-options';
export { FLOW_LIMIT_RANGES, LANE_SETTING_RANGES } from './queue/flow-limits';
export * from './queue/job-view';
export * from './queue/reads';
export * from './module/echomq-options';
export { RedisConnections, createRedisClient } from './connection/redis-connections';
export * from './connection/redis-version';
export * from './queue/data-format';
export * from './worker';
export * from './schedules/cron-next';
export * from './schedules/next-run';
export * from './schedules/schedule-definition';
export { SCHEDULE_LIST_MAX } from './schedules/schedule-reads';
export { ScheduleSweeper, type SweepResult } from './schedules/schedule-sweep';
export type { AdvanceOutcome } from './schedules/advance-schedule';
// schedules
export * from './queue/job-control/control-arguments';
export { CLEAN_LIMIT_DEFAULT, CLEAN_LIMIT_MAX, CLEAN_AGE_MAX_MS } from './queue/job-control/clean-jobs';
export { RETRY_ALL_MAX } from './queue/job-control/retry-all-dead';
export { buildJobUpdate } from './queue/job-control/update-patch';
// job control
export * from './queue/dedupe-options';
// dedupe
export { CancelWatch } from './worker/cancel-watch';
// job log and cancellation
export * from './queue/recent-completed';
// retention
export * from './doctor';
// doctor
