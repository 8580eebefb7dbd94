import type { Logger } from '@nestjs/common';
import { releaseJobs, type ScriptContext } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { repeatUntilKnown } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { monotonicMs } from '../monotonic';
import type { JobSlots } from './job-slots';
import type { RunningJob } from './running-job';

/** After the grace period, how long handlers aborted but not released get to return and be settled. */
const ABORTED_RETURN_MS = 1_000;

/** What a stopping claim loop hands over of its jobs. */
export interface StoppingLoop {
  readonly ctx: ScriptContext;
  readonly queue: string;
  readonly slots: JobSlots;
  readonly logger: Logger;
  /** Counts a job released while its handler still runs as released (see JobRunner.releasedWhileRunning). */
  releasedWhileRunning(job: RunningJob): void;
}

/**
 * The jobs of a loop that stopped claiming: their handlers get until `graceEnd` to return,
 * those still running are released to pending (repeats until `repeatEnd`) and aborted, the
 * aborted ones whose release was not recorded get ABORTED_RETURN_MS more to return and be
 * settled, and every outcome already on its way to Redis is awaited. A released job whose
 * handler ignores its abort is counted as released now: its outcome is moot, whenever it returns.
 */
export async function drainAtStop(loop: StoppingLoop, graceEnd: number, repeatEnd: number): Promise<void> {
  const { slots } = loop;
  await slots.handlersReturned(graceEnd);
  const left = slots.runningJobs();
  if (left.length > 0) {
    const unreleased = await releaseAtShutdown(loop.ctx, loop.queue, left, repeatEnd, loop.logger);
    // Their outcomes still count: a handler that returns now is settled (see JobRunner.run).
    await slots.handlersReturned(monotonicMs() + ABORTED_RETURN_MS, unreleased);
    for (const job of left) {
      if (!unreleased.includes(job) && slots.isRunning(job)) loop.releasedWhileRunning(job);
    }
  }
  // Outcomes already computed still go out (at a shutdown, settle repeats end at repeatEnd).
  await slots.settled();
}

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
