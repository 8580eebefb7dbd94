import type { Logger } from '@nestjs/common';
import { isTransientRedisError, StaleJobError } from '../errors';
import { newRequestId } from '../scripts/request-id';
import { monotonicMs } from '../monotonic';
import type { RunningJob } from './running-job';

/** Tries of a settlement call that Redis refused outright (nothing was written, so trying again is safe). */
const SETTLE_TRIES = 5;
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2_000;

/** What repeatSettlement returns when it gave the call up (logged): the outcome is unknown. */
export const GAVE_UP = Symbol('gave up');

export interface SettleRepeat {
  readonly verb: string;
  /** Repeat a call whose outcome is unknown (a transient error) under its request id. */
  readonly repeatUnknown: boolean;
  /** How long after its first send the call may be repeated (the replay window, less a deadline). */
  readonly repeatForMs: number;
  /** At shutdown: no repeat after this local time (read at each try: shutdown may begin meanwhile). */
  stopsAt(): number;
  readonly logger: Logger;
}

/**
 * One settlement call, made again under the same request id while its outcome is unknown
 * (when `repeatUnknown`) and a few times when Redis refused it, until the job's local lease
 * end, the replay window or the shutdown deadline. StaleJobError passes through; GAVE_UP
 * means the call was given up on (logged): the reaper returns the job when its lease expires.
 */
export async function repeatSettlement<T>(
  running: RunningJob,
  call: (requestId: string) => Promise<T>,
  repeat: SettleRepeat,
): Promise<T | typeof GAVE_UP> {
  const requestId = newRequestId();
  const repeatEnd = monotonicMs() + repeat.repeatForMs;
  for (let tries = 1; ; tries++) {
    try {
      return await call(requestId);
    } catch (error) {
      if (error instanceof StaleJobError) throw error;
      const untilMs = Math.min(running.leaseValidUntil, repeatEnd, repeat.stopsAt());
      const transient = isTransientRedisError(error);
      const again = transient ? repeat.repeatUnknown : tries < SETTLE_TRIES;
      if (!again || monotonicMs() >= untilMs) {
        repeat.logger.error(
          `Could not ${repeat.verb} job ${running.record.id} (${(error as Error).message}); ` +
            'the reaper will return it when its lease expires',
        );
        return GAVE_UP;
      }
      const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** tries, untilMs - monotonicMs());
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
