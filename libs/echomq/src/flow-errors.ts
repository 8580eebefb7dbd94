/**
 * The errors of flow control: the one a handler throws when a service it calls limits it,
 * and the one its attempt fails with when it outlives its timeout.
 */
import { describeValue, EchoMqError, InvalidArgumentError } from './errors';
import { parseRetryAfter } from './http/retry-after';

/** The longest hold a RateLimitedError may ask for: one day, the longest rate window. */
const RETRY_AFTER_MAX_MS = 86_400_000;
/** The hold when none can be read: a non-finite retryAfterMs, or a missing or unparseable Retry-After. */
const RETRY_AFTER_DEFAULT_MS = 1_000;

/**
 * Never throws: a RateLimitedError is built on the path where an upstream just limited the
 * handler, and an error thrown while building it would fail the attempt (spending its budget
 * and calling the upstream again) instead of holding back.
 */
function clampedRetryAfter(retryAfterMs: unknown): number {
  if (typeof retryAfterMs !== 'number' || !Number.isFinite(retryAfterMs)) return RETRY_AFTER_DEFAULT_MS;
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(1, Math.ceil(retryAfterMs)));
}

function checkedScope(scope: unknown): 'queue' | 'lane' {
  if (scope === undefined || scope === 'queue' || scope === 'lane') return scope ?? 'queue';
  throw new InvalidArgumentError(
    `RateLimitedError: scope must be 'queue' or 'lane', got ${describeValue(scope)}`,
  );
}

/** What a RateLimitedError holds back, and the message it carries (the default names the hold). */
export interface RateLimitedOptions {
  readonly scope?: 'queue' | 'lane';
  readonly message?: string;
}

/**
 * Thrown by a handler when a service it calls limits it (an HTTP 429, a quota): the job goes
 * back to pending WITHOUT spending its attempt, and the queue (scope 'queue', the default) or
 * the job's lane (scope 'lane') is held back, for every worker, for retryAfterMs.
 *
 * Any number is taken, so that a value read off a response cannot turn the throttle into a
 * failure: a fraction is rounded up, a value below 1 becomes 1 ms, one above 86,400,000 (a
 * day) becomes 86,400,000, and NaN or an infinity becomes 1,000 ms. With a `Retry-After`
 * header at hand, `RateLimitedError.fromRetryAfter(header)` reads it for you.
 */
export class RateLimitedError extends EchoMqError {
  /** How long the queue or lane is held back: an integer from 1 to 86,400,000 ms. */
  readonly retryAfterMs: number;
  /** What is held back: the whole queue, or only the lane of the job that was limited. */
  readonly scope: 'queue' | 'lane';

  constructor(retryAfterMs: number, options: RateLimitedOptions = {}) {
    const ms = clampedRetryAfter(retryAfterMs);
    const scope = checkedScope(options.scope);
    super('RATE_LIMITED', options.message ?? `Rate limited: the ${scope} is held back for ${ms} ms`);
    this.retryAfterMs = ms;
    this.scope = scope;
  }

  /**
   * Builds the error from an HTTP `Retry-After` header (`response.headers.get('retry-after')`):
   * delay-seconds ("120", or a decimal such as "1.5") or an HTTP-date (RFC 9110), counted
   * from Date.now(). Clamped as the constructor clamps (a date in the past holds 1 ms); a
   * missing or unparseable header holds 1,000 ms.
   */
  static fromRetryAfter(
    header: string | null | undefined,
    options: RateLimitedOptions = {},
  ): RateLimitedError {
    return new RateLimitedError(parseRetryAfter(header, Date.now()) ?? RETRY_AFTER_DEFAULT_MS, options);
  }
}

/**
 * A handler ran past its timeout (the job's own timeoutMs, else its processor's): the reason
 * its AbortSignal fires, and the error its attempt fails with (retried per backoff, or dead
 * when the budget is spent). The handler's own later return or throw is ignored.
 */
export class JobTimeoutError extends EchoMqError {
  constructor(
    readonly id: string,
    readonly timeoutMs: number,
  ) {
    super('JOB_TIMEOUT', `Job ${id} timed out after ${timeoutMs} ms`);
  }
}
