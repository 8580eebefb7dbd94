import { InvalidArgumentError } from '../errors';
import type { JobView } from '../queue/job-view';
import { JobExpectationError } from './errors';
import { mismatchOf, show, showJob, showMismatch, type JobMatch } from './job-match';

/** Jobs listed in a failed expectation's message; the rest are counted. */
const LISTED_MAX = 10;

/**
 * The views that match; when none does, a JobExpectationError that names the pattern and
 * lists the jobs that were there, each with its first difference from the pattern:
 *
 *   expectEnqueued('emails'): no pending or scheduled job matches {"data":{"to":"b@example.com"}}.
 *   1 pending or scheduled job(s):
 *     JOB0Ah3kPz9QwE  pending   name ""  data {"to":"a@example.com"}
 *       data.to: expected "b@example.com", got "a@example.com"
 */
export function expectSome<D, R>(
  call: string,
  where: string,
  views: readonly JobView<D, R>[],
  match: JobMatch<D, R>,
  note?: string,
): JobView<D, R>[] {
  if (match === undefined || match === null) {
    throw new InvalidArgumentError(`${call}: give the pattern or predicate the job must match`);
  }
  const found = views.filter((view) => mismatchOf(view, match) === undefined);
  if (found.length > 0) return found;
  const lines = [`${call}: no ${where} job matches ${show(match)}.`];
  if (views.length === 0) lines.push(`There is no ${where} job.`);
  else lines.push(`${views.length} ${where} job(s):`);
  for (const view of views.slice(0, LISTED_MAX)) {
    lines.push(`  ${showJob(view)}`);
    const mismatch = mismatchOf(view, match);
    if (mismatch && typeof match !== 'function') lines.push(`    ${showMismatch(mismatch)}`);
  }
  if (views.length > LISTED_MAX) lines.push(`  ... and ${views.length - LISTED_MAX} more`);
  if (note) lines.push(note);
  throw new JobExpectationError(lines.join('\n'));
}
