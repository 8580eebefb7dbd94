import type { LoggerService } from '@nestjs/common';
import { isOutOfMemoryReply } from '../scripts/reply-errors';

/**
 * At most one warning in this long, however often Redis fills up meanwhile: under a producer
 * that keeps it at its limit, Redis is full and has room again many times a second.
 */
export const FULL_REDIS_WARN_EVERY_MS = 60_000;

/**
 * Says that Redis is full (maxmemory reached, noeviction), for a loop that would meet the
 * refusal on every pass: a claim loop, a reaper. A warning when it starts (at most one every
 * FULL_REDIS_WARN_EVERY_MS), a debug line for each refusal after it, and one line when a pass
 * goes through again after a warning. A full Redis is not an outage: the transitions that free
 * room (claim, complete, fail, reap...) still run, so the loop goes on, and only what grows
 * memory waits for room.
 */
export class FullRedisNotice {
  private full = false;
  private warnedAt = Number.NEGATIVE_INFINITY;
  /** A warning was said since the last 'room again' line. */
  private warned = false;

  constructor(
    private readonly logger: LoggerService,
    /** Who meets it, as the lines name it: 'The reaper', 'Claim loop of emails'. */
    private readonly who: string,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Whether `error` is a full Redis's refusal; says so as described above. */
  met(error: unknown): boolean {
    if (!isOutOfMemoryReply(error)) return false;
    const message = (error as Error).message.replace(/\.?$/, '.');
    const first = !this.full;
    this.full = true;
    if (!first || this.clock() - this.warnedAt < FULL_REDIS_WARN_EVERY_MS) {
      this.logger.debug?.(`${this.who}: ${message}`);
      return true;
    }
    this.warnedAt = this.clock();
    this.warned = true;
    this.logger.warn(
      `${this.who}: Redis is full: ${message} Jobs are still claimed and completed, which frees room; ` +
        'writes that would grow memory (enqueue, progress, the registry) are refused until then ' +
        `(said at most once a minute)`,
    );
    return true;
  }

  /** A pass went through without a refusal. */
  cleared(): void {
    if (!this.full) return;
    this.full = false;
    if (!this.warned) return;
    this.warned = false;
    this.logger.log(`${this.who}: Redis has room again`);
  }
}
