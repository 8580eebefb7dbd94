import type { JobId } from '../../ids';
import { assertJobId, type StateSet } from '../../keyspace';
import { readJobView, readJobViews, removeJob, retryDead, type RemovedFrom } from '../../scripts';
import { repeatUntilKnown } from '../../scripts/repeat';
import { newRequestId } from '../../scripts/request-id';
import { toJobView, type JobView } from '../job-view';
import { candidatesForId } from '../partitions/partition-layout';
import { sumFields } from '../partitions/partition-merge';
import { browseAcross } from '../partitions/partitioned-reads';
import { countStates, readMetrics, type BrowseOptions, type QueueCounts } from '../reads';
import { QueueSurface } from './queue-surface';

/**
 * QueueService's reads of jobs and depths, and its per-job retry and remove. Of a partitioned
 * queue (docs/partitions.md) a read covers every partition and a call by id goes to the
 * partition the id names.
 */
export abstract class JobSurface extends QueueSurface {
  /** The job and its state, or undefined when no such job exists (or it finished and was not retained). */
  async getJob<T = unknown>(queue: string, id: string): Promise<JobView<T> | undefined> {
    const jobId = assertJobId(id);
    for (const physical of candidatesForId(await this.partitionLayout(queue), jobId)) {
      const view = toJobView<T>(queue, jobId, await readJobView(this.context(physical), jobId));
      if (view) return view;
    }
    return undefined;
  }

  /**
   * Views of jobs by id, in the order of `ids` (undefined: no such job, or finished and not
   * retained): one pipelined read per physical queue, then a second round, in the other
   * physical queue that may hold it (candidatesForId), for ids not found in the first.
   */
  async getJobs<T = unknown>(queue: string, ids: readonly string[]): Promise<(JobView<T> | undefined)[]> {
    const jobIds = ids.map((id) => assertJobId(id));
    const layout = await this.partitionLayout(queue);
    const views = new Array<JobView<T> | undefined>(jobIds.length);
    let left = jobIds.map((_, index) => index);
    for (let round = 0; left.length > 0; round++) {
      const byPhysical = new Map<string, number[]>();
      for (const index of left) {
        const physical = candidatesForId(layout, jobIds[index])[round];
        if (physical === undefined) continue;
        let indexes = byPhysical.get(physical);
        if (!indexes) byPhysical.set(physical, (indexes = []));
        indexes.push(index);
      }
      left = [];
      await Promise.all(
        [...byPhysical].map(async ([physical, indexes]) => {
          const raws = await readJobViews(
            this.context(physical),
            indexes.map((index) => jobIds[index]),
          );
          indexes.forEach((index, at) => {
            views[index] = toJobView<T>(queue, jobIds[index], raws[at]);
            if (!views[index]) left.push(index);
          });
        }),
      );
    }
    return views;
  }

  /** Ids in one state: pending and dead newest first, active and schedule soonest first. */
  async browse(queue: string, state: StateSet, options?: BrowseOptions): Promise<JobId[]> {
    return browseAcross(await this.contextsOf(queue), state, options);
  }

  /** Like browse, with each job's view (getJobs: one pipelined read per physical queue the ids name). Jobs that finished meanwhile are left out. */
  async listJobs<T = unknown>(
    queue: string,
    state: StateSet,
    options?: BrowseOptions,
  ): Promise<JobView<T>[]> {
    const layout = await this.partitionLayout(queue);
    const ids = await browseAcross(this.contextsIn(layout), state, options);
    if (ids.length === 0) return [];
    const views = await this.getJobs<T>(queue, ids);
    return views.filter((view): view is JobView<T> => view !== undefined);
  }

  /** The four depths; of a partitioned queue, summed over its partitions. */
  async counts(queue: string): Promise<QueueCounts> {
    const counts = await Promise.all((await this.contextsOf(queue)).map((ctx) => countStates(ctx)));
    return counts.length === 1 ? counts[0] : sumFields(counts);
  }

  /** Transition counters; of a partitioned queue, summed over its partitions. */
  async metrics(queue: string): Promise<Record<string, number>> {
    const read = await Promise.all(
      (await this.contextsOf(queue)).map((ctx) => readMetrics(ctx.redis, ctx.keys)),
    );
    return read.length === 1 ? read[0] : sumFields(read);
  }

  /** dead -> pending with a fresh retry budget. Throws JobNotFoundError / JobStateError. */
  async retry(queue: string, id: string): Promise<void> {
    const jobId = assertJobId(id);
    await this.onJob(queue, jobId, (ctx) => {
      const requestId = newRequestId();
      return repeatUntilKnown(() => retryDead(ctx, jobId, requestId), this.repeatOnce());
    });
  }

  /**
   * Removes a job in any state. An active job's handler is aborted promptly, in whichever process
   * runs it (within about 100 ms, through the queue's cancels stream), and its late settlement
   * changes nothing (STALE).
   */
  async remove(queue: string, id: string): Promise<RemovedFrom> {
    const jobId = assertJobId(id);
    return this.onJob(queue, jobId, (ctx) => {
      const requestId = newRequestId();
      return repeatUntilKnown(() => removeJob(ctx, jobId, requestId), this.repeatOnce());
    });
  }
}
