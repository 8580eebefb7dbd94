// Internal: the building blocks under the public surface (script wrappers, the key
// builder, connections, the worker runtime). Exposed for this repository's own apps,
// benchmarks and tests; no stability promise is made for anything here.
export * from './index';
export * from './errors';
export * from './flow-errors';
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
// schedules
// job control
// dedupe
// job log and cancellation
// retention
