import type { Logger } from '@nestjs/common';

/** At most one throttle line per queue this often. */
const THROTTLE_LOG_EVERY_MS = 1_000;

/**
 * Says at `log` level that a queue's jobs are being throttled (RateLimitedError), so a
 * limited upstream shows in the default log, but at most one line per second per queue: a
 * storm of 429s must not flood the log. The first throttle after a quiet second is logged
 * at once; those in the second that follows are counted into the next line.
 */
export class ThrottleLog {
  private lastAt = -Infinity;
  private unlogged = 0;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  record(id: string, retryAfterMs: number, scope: 'queue' | 'lane'): void {
    const now = this.now();
    if (now - this.lastAt < THROTTLE_LOG_EVERY_MS) {
      this.unlogged += 1;
      return;
    }
    const more = this.unlogged === 0 ? '' : ` (and ${this.unlogged} more throttle(s) since the last line)`;
    this.lastAt = now;
    this.unlogged = 0;
    this.logger.log(
      `Job ${id} was rate limited: back to pending, its ${scope} held back ${retryAfterMs} ms${more}`,
    );
  }
}
