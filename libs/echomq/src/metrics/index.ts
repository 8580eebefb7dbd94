// The metrics of EchoMQ (docs/operations.md).
export { EchoMqMetrics } from './echomq-metrics';
export { LANES_REPORTED_MAX } from './redis-metrics';
export { SNAPSHOT_MAX_AGE_MS, SNAPSHOT_BUDGET_MS, QUEUES_READ_AT_ONCE } from './redis-snapshot';
