import { EchoMqError } from '../errors';
import type { QueueCounts } from '../queue/reads';

/**
 * The errors of the testing kit. They live here, not in the library's errors, because the
 * kit is its own entry (`@echomq/nestjs/testing`) that applications never load in production.
 */

/** startRedis() found no redis-server to run: the package is not installed (or not on PATH). */
export class RedisServerNotFoundError extends EchoMqError {
  constructor(readonly command: string) {
    super(
      'REDIS_SERVER_NOT_FOUND',
      `${command} was not found on PATH: install Redis (for example \`apt-get install redis-server\`, ` +
        '`brew install redis`), or set REDIS_URL to a Redis server the tests may use',
    );
  }
}

/** startRedis() could not get a server that answers: the one it started exited, or REDIS_URL's is unreachable. */
export class TestRedisError extends EchoMqError {
  constructor(message: string) {
    super('TEST_REDIS_FAILED', message);
  }
}

/** runUntilIdle() gave up: the queue still had pending or active jobs at its timeout. */
export class RunTimeoutError extends EchoMqError {
  constructor(
    readonly queue: string,
    readonly timeoutMs: number,
    readonly counts: QueueCounts,
    message: string,
  ) {
    super('RUN_TIMEOUT', message);
  }
}

/**
 * A failed expectation of the kit (expectEnqueued, expectDead, expectCompleted). A plain
 * Error, so that any test runner prints its message as it is: what was expected, and
 * what the queue held instead.
 */
export class JobExpectationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JobExpectationError';
  }
}
