import { compareIds, type JobId } from '../ids';
import type { StateSet } from '../keyspace';
import { toJobView, type JobView } from '../queue/job-view';
import type { QueueService } from '../queue/queue.service';
import { readJobViews } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { execAll } from '../connection/exec-all';

/** Most jobs read from one set: a test's queue holds far fewer; a bigger one is cut, not read whole. */
export const READ_MAX_PER_STATE = 10_000;

/**
 * The views of the jobs in the given sets, oldest first (mint order, which is enqueue
 * order), at most READ_MAX_PER_STATE per set. Each set is read with one ZRANGE, then
 * the views in pipelined batches; jobs that moved on in between are left out.
 */
export async function readJobs<D, R>(
  queues: QueueService,
  queue: string,
  states: readonly StateSet[],
): Promise<JobView<D, R>[]> {
  const ctx = queues.context(queue);
  // One MULTI: a job promoted from schedule to pending between two reads would be in neither.
  const multi = ctx.redis.multi();
  for (const state of states) multi.zrange(ctx.keys.set(state), 0, READ_MAX_PER_STATE - 1);
  const sets = (await execAll(multi, `The job ids of queue ${queue}`)) as string[][];
  const ids = [...new Set(sets.flat())].sort(compareIds) as JobId[];
  return readJobsById<D, R>(queues, queue, ids);
}

/** The views of the given jobs that are still there (a completed job only while its row is retained). */
export async function readJobsById<D, R>(
  queues: QueueService,
  queue: string,
  ids: readonly JobId[],
): Promise<JobView<D, R>[]> {
  const ctx = queues.context(queue);
  const views: JobView<D, R>[] = [];
  for (let at = 0; at < ids.length; at += SCRIPT_BATCH_MAX) {
    const slice = ids.slice(at, at + SCRIPT_BATCH_MAX);
    const raws = await readJobViews(ctx, slice);
    raws.forEach((raw, index) => {
      // The row's result is parsed JSON; its type is the queue definition's promise.
      const view = toJobView<D>(queue, slice[index], raw) as JobView<D, R> | undefined;
      if (view) views.push(view);
    });
  }
  return views;
}
