import { ENQUEUE_MANY_MAX, type JobId, type JobToEnqueue, type QueueService } from '@app/echomq/internal';

/**
 * Enqueues any number of jobs in calls of at most ENQUEUE_MANY_MAX (one script call moves
 * at most SCRIPT_BATCH_MAX jobs), one call after the other so ids come back in input order.
 */
export async function enqueueAll<T>(
  queues: QueueService,
  queue: string,
  jobs: readonly JobToEnqueue<T>[],
): Promise<JobId[]> {
  const ids: JobId[] = [];
  for (let from = 0; from < jobs.length; from += ENQUEUE_MANY_MAX) {
    ids.push(...(await queues.enqueueMany(queue, jobs.slice(from, from + ENQUEUE_MANY_MAX))));
  }
  return ids;
}

/** `count` jobs in one lane, numbered in their data. */
export function laneJobs(lane: string, count: number): JobToEnqueue<{ n: number }>[] {
  return Array.from({ length: count }, (_, n) => ({ data: { n }, lane }));
}
