import { RateLimitedError } from '../flow-errors';

/**
 * The RateLimitedError a handler threw, if it threw one. Besides `instanceof`, an error with
 * `code === 'RATE_LIMITED'` and a numeric `retryAfterMs` counts: with two installed copies of
 * the package (a common monorepo accident), the handler's error comes from the other copy's
 * class, and refusing it would turn a throttle into a failed attempt. Such an error is
 * rebuilt here, so its hold is clamped by this copy's rules and its scope is one this copy
 * knows ('queue' unless it says 'lane').
 */
export function rateLimitOf(error: unknown): RateLimitedError | undefined {
  if (error instanceof RateLimitedError) return error;
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, retryAfterMs, scope, message } = error as Record<string, unknown>;
  if (code !== 'RATE_LIMITED' || typeof retryAfterMs !== 'number') return undefined;
  return new RateLimitedError(retryAfterMs, {
    scope: scope === 'lane' ? 'lane' : 'queue',
    ...(typeof message === 'string' ? { message } : {}),
  });
}
