import { JobFailedError, JobNotFoundError } from '../errors';
import type { JobView } from '../queue/job-view';
import { splitIds, type QueueEvent } from './queue-event';

/** How a wait ends. */
export type Outcome =
  { readonly kind: 'resolve'; readonly value: unknown } | { readonly kind: 'reject'; readonly error: Error };

/**
 * What a finishing event says about one job: its outcome, or that the job's row holds
 * the full answer (a result too large for the event, an error text cut to fit it), to
 * be read, with the outcome to fall back on when the row says nothing more.
 */
export type Verdict = Outcome | { readonly kind: 'read'; readonly fallback: Outcome };

const parsedResults = new WeakMap<QueueEvent, unknown[]>();

/** A 'completed' event's results, a JSON array aligned with its ids; parsed once per event. */
function resultsOf(event: QueueEvent): unknown[] {
  let results = parsedResults.get(event);
  if (!results) {
    try {
      const parsed: unknown = JSON.parse(event.fields.results ?? '[]');
      results = Array.isArray(parsed) ? parsed : [];
    } catch {
      results = [];
    }
    parsedResults.set(event, results);
  }
  return results;
}

/** The verdict of a finishing event on `id`; undefined when the event does not end it. */
export function verdictOf(event: QueueEvent, id: string): Verdict | undefined {
  const index = event.ids.indexOf(id);
  if (index < 0) return undefined;
  switch (event.type) {
    case 'completed': {
      // `omitted`: ids whose result was too large for the event; their row keeps it a while.
      if (splitIds(event.fields.omitted).includes(id)) {
        return { kind: 'read', fallback: { kind: 'resolve', value: undefined } };
      }
      const value = resultsOf(event)[index];
      return { kind: 'resolve', value: value === null ? undefined : value };
    }
    case 'dead':
      // The event's error may be cut short; the row keeps the longer text.
      return {
        kind: 'read',
        fallback: { kind: 'reject', error: new JobFailedError(id, event.fields.error ?? 'dead') },
      };
    // Bulk removals end a wait as remove does: the job is gone, not finished.
    case 'removed':
    case 'drained':
    case 'cleaned':
    case 'obliterated':
    case 'trimmed':
      return { kind: 'reject', error: new JobNotFoundError(id) };
    default:
      return undefined;
  }
}

/** The outcome a job's view shows, if it finished; undefined while it is live or unknown. */
export function outcomeOfView(id: string, view: JobView | undefined): Outcome | undefined {
  if (view?.state === 'completed') return { kind: 'resolve', value: view.result };
  if (view?.state === 'dead') {
    return { kind: 'reject', error: new JobFailedError(id, view.lastError ?? 'dead') };
  }
  return undefined;
}
