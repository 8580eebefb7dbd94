import type { JobId } from '../../ids';
import { assertJobId, logicalQueueOf } from '../../keyspace';
import type { CleanState } from '../../scripts/clean';
import { promoteJob } from '../../scripts/promote-job';
import { repeatUntilKnown } from '../../scripts/repeat';
import { newRequestId } from '../../scripts/request-id';
import { updateJob, type UpdatedJobState } from '../../scripts/update-job';
import { cleanJobs, type CleanOptions } from '../job-control/clean-jobs';
import { drainQueue, type DrainOptions } from '../job-control/drain-queue';
import { obliterateQueue, type ObliterateOptions } from '../job-control/obliterate-queue';
import { retryAllDead, type RetryAllOptions } from '../job-control/retry-all-dead';
import { buildJobUpdate, type JobPatch } from '../job-control/update-patch';
import { HistorySurface } from './history-surface';
import { CLEAN_LIMIT_DEFAULT } from '../job-control/clean-jobs';
import { InvalidArgumentError } from '../../errors';

/**
 * A job stays in its partition for life (its id names it), so an update cannot move it to a
 * lane that lives in another: it would break that lane's order and caps.
 */
function refuseLaneMove(queue: string, count: number): never {
  throw new InvalidArgumentError(
    `update cannot change the lane of a job of the partitioned queue '${queue}' (${count} partitions): ` +
      'a job stays in its partition, and a lane lives in one; remove it and enqueue it again in the new lane',
  );
}

/**
 * QueueService's bulk and per-job controls: drain, clean, obliterate, retry all, promote,
 * update (docs/job-control.md). The bulk ones go in chunks of at most 500 jobs per script call,
 * each chunk replay-safe; none of them is one atomic step over the whole queue.
 */
export abstract class JobControlSurface extends HistorySurface {
  /**
   * Removes every pending job (every lane and priority) and every scheduled one (delayed jobs
   * and retries waiting out a backoff) unless keepScheduled; active and dead jobs stay.
   * Returns how many went. A schedule's next occurrence drained is made again by its sweep.
   */
  async drain(queue: string, options?: DrainOptions): Promise<number> {
    const contexts = await this.contextsOf(queue);
    const drained = await Promise.all(
      contexts.map((ctx) => drainQueue(ctx, options, () => this.repeatOnce())),
    );
    return drained.reduce((sum, count) => sum + count, 0);
  }

  /**
   * Removes jobs of one state enqueued more than olderThanMs ago (their id's time, Redis server
   * clock), up to limit (default 1,000, at most 100,000): dead and schedule oldest first; pending
   * lane by lane, oldest first within each lane (the limit counts in lane order). Returns their ids.
   * Active jobs are refused (use remove), and completed ones (their rows expire by themselves).
   */
  async clean(queue: string, state: CleanState, options: CleanOptions): Promise<JobId[]> {
    const contexts = await this.contextsOf(queue);
    if (contexts.length === 1) return cleanJobs(contexts[0], state, options, () => this.repeatOnce());
    // Partition after partition, each taking what the limit has left.
    // The first call checks the options as given, before anything of another partition is sent.
    const cleaned = await cleanJobs(contexts[0], state, options, () => this.repeatOnce());
    const limit = options.limit ?? CLEAN_LIMIT_DEFAULT;
    for (const ctx of contexts.slice(1)) {
      const left = limit - cleaned.length;
      if (left <= 0) break;
      cleaned.push(...(await cleanJobs(ctx, state, { ...options, limit: left }, () => this.repeatOnce())));
    }
    return cleaned;
  }

  /**
   * Deletes the whole queue: its jobs, lanes, settings, schedules, metrics and events, and its
   * name in the registry, in bounded chunks; the first pauses the queue. Of a partitioned queue,
   * every physical queue, one after another, and then its entry in the partitions registry, so
   * a queue made again under its name starts unpartitioned (or with the count declared then).
   * Refused with QueueBusyError while jobs hold unexpired leases unless force, which removes
   * them too and aborts their handlers (expired leases go either way). A later chunk that finds workers or producers
   * still at it stops with ObliterateStoppedError, saying what is left; call again once they have
   * stopped. A job enqueued meanwhile may or may not survive.
   */
  async obliterate(queue: string, options?: ObliterateOptions): Promise<{ removed: number }> {
    const layout = await this.partitionLayout(queue);
    let removed = 0;
    for (const ctx of this.contextsIn(layout)) {
      removed += (await obliterateQueue(ctx, options, () => this.repeatOnce())).removed;
      // The registry entry and format record are gone: the next write here registers again.
      this.forgetRegistration(ctx.keys.queue);
    }
    // Every physical queue of the logical queue is gone (a partition named directly leaves the
    // others, and so the entry). A process still declaring a count records it again at its next use.
    if (layout.queue === logicalQueueOf(layout.queue)) await this.forgetPartitions(layout.queue);
    return { removed };
  }

  /**
   * Moves dead jobs back to pending with a fresh retry budget, oldest first, as retry does for
   * one; by default as many as dead held when the call began. Returns how many moved.
   */
  async retryAll(queue: string, options?: RetryAllOptions): Promise<number> {
    const contexts = await this.contextsOf(queue);
    if (contexts.length === 1) return retryAllDead(contexts[0], options, () => this.repeatOnce());
    // The first call checks the options as given, before anything of another partition is sent.
    let retried = await retryAllDead(contexts[0], options, () => this.repeatOnce());
    for (const ctx of contexts.slice(1)) {
      const left = options?.limit === undefined ? undefined : options.limit - retried;
      if (left !== undefined && left <= 0) break;
      const scoped = left === undefined ? options : { ...options, limit: left };
      retried += await retryAllDead(ctx, scoped, () => this.repeatOnce());
    }
    return retried;
  }

  /** schedule -> pending now. Throws JobNotFoundError, or JobStateError when the job is not scheduled. */
  async promote(queue: string, id: string): Promise<void> {
    const jobId = assertJobId(id);
    await this.onJob(queue, jobId, (ctx) => {
      const requestId = newRequestId();
      return repeatUntilKnown(() => promoteJob(ctx, jobId, requestId), this.repeatOnce());
    });
  }

  /**
   * Changes a job that is not active: its data, run-at (runAt or delayMs: a pending job moves to
   * schedule, a scheduled one gets the new time, at or before now it is pending now), priority
   * and lane (a pending job moves between lanes; of a scheduled or dead one the row changes).
   * Returns the state it is in afterwards. Throws JobNotFoundError, or JobStateError when it is
   * active or finished, or dead and given a run-at; bad input as InvalidArgumentError.
   */
  async update(queue: string, id: string, patch: JobPatch): Promise<UpdatedJobState> {
    const layout = await this.partitionLayout(queue);
    const jobId = assertJobId(id);
    // A partition named directly (emails#2) has its queue's schema.
    const schema = this.definitions.get(logicalQueueOf(queue))?.schemas.data;
    const update = await buildJobUpdate(queue, patch, this.settings.maxPayloadBytes, schema);
    if (layout.partitioned && update.lane !== undefined) refuseLaneMove(queue, layout.count);
    return this.onJob(queue, jobId, (ctx) => {
      const requestId = newRequestId();
      return repeatUntilKnown(() => updateJob(ctx, jobId, update, requestId), this.repeatOnce());
    });
  }
}
