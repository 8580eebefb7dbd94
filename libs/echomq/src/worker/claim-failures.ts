import type { Logger } from '@nestjs/common';
import { FullRedisNotice } from '../connection/full-redis-notice';
import { warnUnlessUnreachable } from '../connection/warn-unless-unreachable';

const ERROR_BACKOFF_FIRST_MS = 50;
const ERROR_BACKOFF_MAX_MS = 5_000;

/**
 * A claim loop's failed claims in a row: each is said (a full Redis once per episode, see
 * FullRedisNotice; an unreachable Redis by the connection, see warnUnlessUnreachable) and
 * backed off from, doubling from 50 ms to 5 s, until a claim goes through again.
 */
export class ClaimFailures {
  private failures = 0;
  private readonly fullRedis: FullRedisNotice;

  constructor(
    private readonly logger: Logger,
    private readonly queue: string,
  ) {
    this.fullRedis = new FullRedisNotice(logger, `Claim loop of ${queue}`);
  }

  /** A claim went through: the next failure backs off from the start again. */
  cleared(): void {
    this.failures = 0;
    this.fullRedis.cleared();
  }

  /** A claim failed with `error`: says so, and returns how long to back off before the next one. */
  failed(error: unknown): number {
    this.failures += 1;
    if (!this.fullRedis.met(error)) {
      warnUnlessUnreachable(
        this.logger,
        error,
        `Claim loop of ${this.queue}: ${(error as Error).message}; retrying`,
      );
    }
    return Math.min(ERROR_BACKOFF_MAX_MS, ERROR_BACKOFF_FIRST_MS * 2 ** this.failures);
  }
}
