import { OutcomeUnknownError } from '../errors';
import { monotonicMs } from '../monotonic';

/**
 * How long one caller waits for a confirmation. A claim has a cut-off (half its lease: past it
 * the jobs must go back unstarted, whatever WAIT says) and stops waiting at shutdown; an
 * enqueue has neither and waits the confirmation out.
 */
export interface ConfirmBound {
  /** Monotonic ms after which the caller no longer waits; its WAIT is not asked to wait past it. */
  readonly untilMs?: number;
  /** Aborted when the caller stops waiting at once (a worker stopping). */
  readonly signal?: AbortSignal;
}

/**
 * `start()`'s promise, or OutcomeUnknownError as soon as `bound` ends first: its cut-off
 * passes or its signal aborts. Nothing is started when it has ended already. The work itself
 * goes on (a WAIT shared with other callers) and its late outcome is dropped.
 */
export function untilBound<T>(start: () => Promise<T>, bound: ConfirmBound): Promise<T> {
  if (bound.signal?.aborted) return Promise.reject(stoppedWaiting('the caller stopped waiting'));
  const leftMs = bound.untilMs === undefined ? undefined : bound.untilMs - monotonicMs();
  if (leftMs !== undefined && leftMs <= 0) return Promise.reject(stoppedWaiting('its cut-off had passed'));
  const work = start();
  return new Promise<T>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const stop = (reason: string): void => {
      done();
      reject(stoppedWaiting(reason));
    };
    const onAbort = (): void => stop('the caller stopped waiting');
    const done = (): void => {
      clearTimeout(timer);
      bound.signal?.removeEventListener('abort', onAbort);
    };
    bound.signal?.addEventListener('abort', onAbort, { once: true });
    if (leftMs !== undefined) timer = setTimeout(() => stop('no confirmation by its cut-off'), leftMs);
    work.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: Error) => {
        done();
        reject(error);
      },
    );
  });
}

function stoppedWaiting(reason: string): OutcomeUnknownError {
  return new OutcomeUnknownError('WAIT', reason);
}
