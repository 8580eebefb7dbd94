import type { Logger } from '@nestjs/common';
import { releaseJobs, type ScriptContext } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { repeatUntilKnown } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import type { RunningJob } from './running-job';

/**
 * Gives the jobs still running at the end of a shutdown's grace period back to pending
 * (their retry budget intact), in calls of at most SCRIPT_BATCH_MAX, each repeated under
 * its request id while its outcome is unknown, until `untilMs`. Each job's `released`
 * says whether Redis recorded its release; only those skip their settlement, so a handler
 * whose release failed and that then succeeds still completes its job. Then every handler
 * is aborted. Returns the jobs whose release was not recorded.
 */
export async function releaseAtShutdown(
  ctx: ScriptContext,
  queue: string,
  jobs: readonly RunningJob[],
  untilMs: number,
  logger: Logger,
): Promise<RunningJob[]> {
  const slices: RunningJob[][] = [];
  for (let at = 0; at < jobs.length; at += SCRIPT_BATCH_MAX)
    slices.push(jobs.slice(at, at + SCRIPT_BATCH_MAX));
  const outcomes = slices.map(async (slice) => {
    const requestId = newRequestId();
    const claims = slice.map((job) => job.claim);
    try {
      return await repeatUntilKnown(() => releaseJobs(ctx, claims, requestId), { untilMs });
    } catch (error) {
      logger.error(
        `Could not release ${slice.length} job(s) of ${queue} at shutdown (${(error as Error).message}); ` +
          'a handler that still returns settles its job, the others are reaped when their leases expire',
      );
      return slice.map(() => false);
    }
  });
  // Set before anything is awaited: a handler returning meanwhile waits for its release's outcome.
  slices.forEach((slice, index) => {
    for (const [at, job] of slice.entries())
      job.released = outcomes[index].then((flags) => flags[at] === true);
  });
  const flags = (await Promise.all(outcomes)).flat();
  const unreleased = jobs.filter((_, index) => !flags[index]);
  logger.log(`Released ${jobs.length - unreleased.length} unfinished job(s) of ${queue} to pending`);
  jobs.forEach((job, index) =>
    job.abort(
      'shutdown',
      flags[index]
        ? `The worker is shutting down; job ${job.record.id} was released`
        : `The worker is shutting down; job ${job.record.id} could not be released`,
    ),
  );
  return unreleased;
}
