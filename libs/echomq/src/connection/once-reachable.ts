import { setTimeout as sleep } from 'node:timers/promises';
import { isTransientRedisError } from '../errors';

/** How often a boot step that failed because Redis was unreachable is tried again. */
export const BOOT_RETRY_MS = 1_000;

/**
 * Repeats a boot step that failed because Redis could not be reached (registering a served
 * queue, subscribing a listener) until it succeeds, so an application started before its
 * Redis still does it once Redis answers. Resolves true once the step succeeded, false when
 * `signal` (the application shutting down) ended the wait first; rejects with the first
 * error that is not about reachability, which the step will not outgrow by waiting.
 */
export async function onceReachable(step: () => Promise<void>, signal: AbortSignal): Promise<boolean> {
  while (!signal.aborted) {
    await sleep(BOOT_RETRY_MS, undefined, { signal }).catch(() => undefined);
    if (signal.aborted) break;
    try {
      await step();
      return !signal.aborted;
    } catch (error) {
      if (!isTransientRedisError(error)) throw error;
    }
  }
  return false;
}
