import { monotonicMs } from '../monotonic';
import { isOutOfMemoryReply } from '../scripts/reply-errors';

/**
 * At most one warning in this long, however often Redis fills up meanwhile: under a producer
 * that keeps it at its limit, Redis is full and has room again many times a second.
 */
export const FULL_REDIS_WARN_EVERY_MS = 60_000;

/** What a notice writes to: a Nest Logger or LoggerService, or any object with these. */
export interface NoticeLogger {
  warn(message: string): void;
  log?(message: string): void;
  debug?(message: string): void;
}

/** What the warning says waits for room, unless the caller names its own. */
const WHAT_WAITS =
  'Jobs are still claimed, completed, failed, reaped, removed, drained, cleaned and obliterated, ' +
  'which frees room; writes that would grow memory (enqueue, a debounce replacing its job, a new ' +
  'or changed schedule, pause, progress and log lines, setLimits, the queue registry) are refused ' +
  'until then';

/**
 * Says that Redis is full (maxmemory reached, noeviction), for something that would meet the
 * refusal again and again: a claim loop, a reaper, the node lease, a registration that waits
 * for room. A warning when a full episode starts, a debug line for each refusal after it, and
 * one line when a pass goes through again after a warning; an episode that starts within
 * FULL_REDIS_WARN_EVERY_MS of the last warning is said at debug level only. A full Redis is
 * not an outage: the transitions that free room (claim, complete, fail, reap...) still run,
 * so the loop goes on, and only what grows memory waits for room.
 *
 * The clock is this process's monotonic one: a wall clock stepped back would keep the
 * warning quiet for as long as the step.
 */
export class FullRedisNotice {
  private full = false;
  private warnedAt = Number.NEGATIVE_INFINITY;
  /** A warning was said since the last 'room again' line. */
  private warned = false;

  constructor(
    private readonly logger: NoticeLogger,
    /** Who meets it, as the lines name it: 'The reaper', 'Claim loop of emails'. */
    private readonly who: string,
    private readonly clock: () => number = monotonicMs,
  ) {}

  /**
   * Whether `error` is a full Redis's refusal; says so as described above. `waits` replaces
   * the warning's account of what still runs and what waits, for a caller whose own work waits
   * ('Its configured limits are written once there is room').
   */
  met(error: unknown, waits: string = WHAT_WAITS): boolean {
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
      `${this.who}: Redis is full: ${message} ${waits.replace(/\.?$/, '.')} ` +
        '(Said once while Redis stays full, and at most once a minute.)',
    );
    return true;
  }

  /** A pass went through without a refusal. */
  cleared(): void {
    if (!this.full) return;
    this.full = false;
    if (!this.warned) return;
    this.warned = false;
    this.logger.log?.(`${this.who}: Redis has room again`);
  }
}
