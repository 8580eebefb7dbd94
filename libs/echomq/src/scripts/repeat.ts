import { isTransientRedisError, OutcomeUnknownError, RedisUnavailableError } from '../errors';
import { monotonicMs } from '../monotonic';

export interface RepeatOptions {
  /** Local clock (ms) after which the last transient error is thrown instead of repeating. */
  readonly untilMs: number;
  /** Called before each repeat, e.g. to log. */
  readonly onRepeat?: (error: Error, attempt: number) => void;
  /** Set when the caller is shutting down: stop repeating at once. */
  readonly stopped?: () => boolean;
  /**
   * Whether RedisUnavailableError (never sent) is repeated too; default true. A caller that
   * already waited a full deadline for the connection may prefer to report it at once.
   */
  readonly retryUnavailable?: boolean;
}

const FIRST_DELAY_MS = 50;
const MAX_DELAY_MS = 2_000;

/**
 * Repeats a replay-safe call (same request id each time) while its outcome is unknown
 * or Redis is unreachable, with capped exponential back-off, until it answers or
 * `untilMs` passes. Because the call is the same call, a repeat of one that already took
 * effect returns the recorded outcome instead of acting twice.
 */
export async function repeatUntilKnown<T>(call: () => Promise<T>, options: RepeatOptions): Promise<T> {
  // The first try whose outcome is unknown: once one may have taken effect, a later
  // "never sent" no longer means nothing was written, and must not be reported as such.
  let unknown: OutcomeUnknownError | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (error instanceof OutcomeUnknownError) unknown ??= error;
      const repeatable =
        isTransientRedisError(error) &&
        (options.retryUnavailable !== false || !(error instanceof RedisUnavailableError));
      if (!repeatable || monotonicMs() >= options.untilMs || options.stopped?.()) {
        throw error instanceof RedisUnavailableError && unknown ? unknown : error;
      }
      options.onRepeat?.(error, attempt);
      const delay = Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** (attempt - 1));
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, options.untilMs - monotonicMs())));
    }
  }
}
