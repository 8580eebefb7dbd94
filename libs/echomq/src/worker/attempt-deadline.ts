import type { Logger } from '@nestjs/common';
import { JobTimeoutError } from '../flow-errors';
import type { RunningJob } from './running-job';

/** What a handler did: returned a value, or threw (or was timed out). */
export type HandlerOutcome =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

/**
 * The handler's outcome, or, should the attempt's deadline (running.timeoutMs, counted from
 * now) come first, a failure with a JobTimeoutError, at once: a handler that ignores its
 * signal must not hold the attempt, its lease or its concurrency slot. At the deadline the
 * job's signal is aborted with that error, and the handler, which may still be running, is
 * handed to `lingering` so the loop keeps counting it until it ends. If it has not returned
 * one turn of the event loop after the abort, it ignored the abort: that is warned about,
 * once for the attempt, since a handler that keeps running holds memory and sockets that
 * nothing bounds but the loop's count of lingering handlers. What it does later is logged
 * at debug and otherwise ignored. A handler that finishes first clears the timer.
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
      let returned = false;
      lingering(
        handler.then((late) => {
          returned = true;
          logLate(logger, running, timeoutMs, late);
        }),
      );
      // One turn lets a handler that honours its signal (a fetch, a stream) reject first.
      setImmediate(() => {
        if (!returned) warnIgnored(logger, running, timeoutMs);
      });
    }, timeoutMs);
    // A handler that never returns must not keep the process alive on its timer alone.
    timer.unref();
    void handler.then((outcome) => {
      clearTimeout(timer);
      resolve(outcome);
    });
  });
}

function warnIgnored(logger: Logger, running: RunningJob, timeoutMs: number): void {
  const { id, attempt } = running.record;
  logger.warn(
    `Job ${id} attempt ${attempt} timed out after ${timeoutMs} ms; its handler ignored the abort and is ` +
      'still running (pass job.signal to what it awaits)',
  );
}

function logLate(logger: Logger, running: RunningJob, timeoutMs: number, late: HandlerOutcome): void {
  const { id, attempt } = running.record;
  const what = late.ok
    ? 'returned'
    : `threw (${late.error instanceof Error ? late.error.message : String(late.error)})`;
  logger.debug(`Job ${id} attempt ${attempt} ${what} after its ${timeoutMs} ms timeout: ignored`);
}
