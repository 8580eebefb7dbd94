// The public surface of EchoMQ.
export * from './errors';
export { BrandedId, JOB_IDS, isJobId, compareIds, type JobId } from './ids';
export { SnowflakeMinter, snowflakeParts, type SnowflakeParts } from './ids';
export * from './keyspace';
export * from './scripts';
export * from './queue/queue-options';
export * from './queue/enqueue-options';
export * from './queue/job-view';
export * from './queue/reads';
export * from './queue/queue.service';
export type { QueueEvent, QueueEventListener } from './queue/queue-events';
export * from './module/echomq-options';
export { ECHOMQ_OPTIONS } from './module/module-definition';
export { RedisConnections, createRedisClient } from './connection/redis-connections';
export { EchoMqModule } from './module/echomq.module';
export * from './worker';
