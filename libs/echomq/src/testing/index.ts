// The testing kit: `@echomq/nestjs/testing`. A separate entry, never loaded by the main one,
// so applications do not ship it; it depends on no test runner (docs/testing.md).

export { startRedis, TestRedis, type StartRedisOptions, type TestRedisModuleOptions } from './test-redis';
export { EchoMqTestKit } from './test-kit';
export type { RunUntilIdleOptions } from './run-until-idle';
export type { RunSummary, RunOutcome } from './run-tally';
export type { JobMatch, Pattern } from './job-match';
export { RedisServerNotFoundError, TestRedisError, RunTimeoutError, JobExpectationError } from './errors';
