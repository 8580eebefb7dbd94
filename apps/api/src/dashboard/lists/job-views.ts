import { readJobViews, toJobView, type JobId, type JobView, type QueueService } from '@app/echomq/internal';

/**
 * The views of jobs of `queue` by id, aligned (undefined for a job that finished or went away
 * meanwhile). An unpartitioned queue's are read in one pipeline. A partitioned queue's are read
 * as QueueService.listJobs reads them: each where its id says it lives (getJob: one lookup, two
 * for a job from before the queue was partitioned), all at once.
 */
export async function jobViewsOf(
  queues: QueueService,
  queue: string,
  ids: readonly string[],
): Promise<(JobView | undefined)[]> {
  if (ids.length === 0) return [];
  const layout = await queues.partitionLayout(queue);
  if (!layout.partitioned) {
    const raws = await readJobViews(queues.context(queue), ids);
    return ids.map((id, index) => toJobView(queue, id as JobId, raws[index]));
  }
  return Promise.all(ids.map((id) => queues.getJob(queue, id)));
}
