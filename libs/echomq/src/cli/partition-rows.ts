import { parsePhysicalQueue } from '../keyspace';
import { isQueuePaused } from '../queue/flow-admin';
import type { PartitionLayout } from '../queue/partitions/partition-layout';
import type { QueueService } from '../queue/queue.service';
import { countStates, type QueueCounts } from '../queue/reads';

/** One physical queue of a partitioned queue, as `emq stats <queue>` lists it under the totals. */
export interface PartitionStats {
  /** Its physical name: `emails#2`, or `emails` itself for jobs from before it was partitioned. */
  readonly queue: string;
  readonly counts: QueueCounts;
  readonly paused: boolean;
  /**
   * New jobs no longer go here: the queue itself once partitioned, or a partition at or above
   * the count after it was lowered. Its jobs still run; it empties as they finish.
   */
  readonly draining: boolean;
}

/** Whether new jobs of `layout` no longer go to `physical`. */
function drains(layout: PartitionLayout, physical: string): boolean {
  const partition = parsePhysicalQueue(physical)?.partition;
  return partition === undefined || partition >= layout.count;
}

/**
 * Each physical queue of a partitioned queue with its own depths and pause flag: two commands
 * each (the depths script and EXISTS of the flag), read at once. The queue itself is listed only
 * when it holds jobs, since a queue partitioned from its start never has any of its own.
 */
export async function partitionRows(
  queues: QueueService,
  layout: PartitionLayout,
): Promise<PartitionStats[]> {
  const rows = await Promise.all(
    layout.physical.map(async (physical): Promise<PartitionStats> => {
      const ctx = queues.context(physical);
      const [counts, paused] = await Promise.all([countStates(ctx), isQueuePaused(ctx)]);
      return { queue: physical, counts, paused, draining: drains(layout, physical) };
    }),
  );
  return rows.filter(
    ({ queue, counts }) =>
      queue !== layout.queue || counts.pending + counts.active + counts.schedule + counts.dead > 0,
  );
}
