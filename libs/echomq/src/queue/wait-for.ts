import { JobFailedError, JobNotFoundError, WaitTimeoutError } from '../errors';
import type { JobView } from './job-view';
import type { QueueEvent, QueueEventReader } from './queue-events';

type Outcome =
  { readonly done: true; readonly result: unknown } | { readonly done: true; readonly error: Error };

/** A 'completed' event carries a JSON array of results aligned with its ids. */
function resultOf(event: QueueEvent, id: string): unknown {
  const results = event.fields.results ? (JSON.parse(event.fields.results) as unknown[]) : [];
  const value = results[event.ids.indexOf(id)];
  return value === null ? undefined : value;
}

/** The job's outcome if this event ends it, else undefined. A 'failed' event (a retry is coming) does not. */
function outcomeOf(event: QueueEvent, id: string): Outcome | undefined {
  if (!event.ids.includes(id)) return undefined;
  switch (event.type) {
    case 'completed':
      return { done: true, result: resultOf(event, id) };
    case 'dead':
      return { done: true, error: new JobFailedError(id, event.fields.error ?? 'dead') };
    case 'removed':
      return { done: true, error: new JobNotFoundError(id) };
    default:
      return undefined;
  }
}

/**
 * Resolves with a job's result, or rejects when it dies, is removed, or the timeout
 * passes. The listener is attached *before* the job's state is read, so a
 * transition between the two reads is never missed. A job that is unknown is
 * given until the reader has caught up with the stream (it may have just
 * finished without a retained row) before the wait rejects with JobNotFoundError;
 * the reader remembers recent outcomes, so a job that finished shortly before the
 * wait began still resolves.
 */
export function waitForJob(
  reader: QueueEventReader,
  id: string,
  timeoutMs: number,
  readView: () => Promise<JobView | undefined>,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let finished = false;
    const finish = (outcome: Outcome): void => {
      if (finished) return;
      finished = true;
      unsubscribe();
      clearTimeout(timer);
      if ('error' in outcome) reject(outcome.error);
      else resolve(outcome.result);
    };
    const unsubscribe = reader.subscribe((event) => {
      const outcome = outcomeOf(event, id);
      if (outcome) finish(outcome);
    });
    const timer = setTimeout(
      () => finish({ done: true, error: new WaitTimeoutError(id, timeoutMs) }),
      timeoutMs,
    );
    readView()
      .then(async (view) => {
        if (view?.state === 'completed') return finish({ done: true, result: view.result });
        if (view?.state === 'dead') {
          return finish({ done: true, error: new JobFailedError(id, view.lastError ?? 'dead') });
        }
        if (!view) {
          await reader.caughtUp();
          const late = reader.finished(id);
          finish((late && outcomeOf(late, id)) || { done: true, error: new JobNotFoundError(id) });
        }
      })
      .catch((error: Error) => finish({ done: true, error }));
  });
}
