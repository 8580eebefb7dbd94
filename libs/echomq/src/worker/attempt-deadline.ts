import type { Logger } from '@nestjs/common';
import { JobTimeoutError } from '../errors';
import type { RunningJob } from './running-job';

/** What a handler did: returned a value, or threw (or was timed out). */
export type HandlerOutcome =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * The handler's outcome, or, should the attempt's deadline (running.timeoutMs, counted from
 * now) come first, a failure with a JobTimeoutError, at once: a handler that ignores its
 * signal must not hold the attempt, its lease or its concurrency slot. At the deadline the
 * job's signal is aborted with that error, and the handler, which may still be running, is
 * handed to `lingering` so the loop keeps counting it as busy until it ends; what it does
 * then is logged at debug and otherwise ignored. A handler that finishes first clears the timer.
 */
export function withDeadline(
  running: RunningJob,
  handler: Promise<HandlerOutcome>,
  lingering: (handler: Promise<void>) => void,
  logger: Logger,
): Promise<HandlerOutcome> {
  const timeoutMs = running.timeoutMs;
  if (timeoutMs === null) return handler;
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      const error = new JobTimeoutError(running.record.id, timeoutMs);
      running.timeOut(error);
      resolve({ ok: false, error });
      lingering(handler.then((late) => logLate(logger, running, timeoutMs, late)));
    }, timeoutMs);
    // A handler that never returns must not keep the process alive on its timer alone.
    timer.unref();
    void handler.then((outcome) => {
      clearTimeout(timer);
      resolve(outcome);
    });
  });
}

function logLate(logger: Logger, running: RunningJob, timeoutMs: number, late: HandlerOutcome): void {
  const { id, attempt } = running.record;
  const what = late.ok
    ? 'returned'
    : `threw (${late.error instanceof Error ? late.error.message : String(late.error)})`;
  logger.debug(`Job ${id} attempt ${attempt} ${what} after its ${timeoutMs} ms timeout: ignored`);
}
