import type { QueueService } from '../queue/queue.service';
import { countStates } from '../queue/reads';

/**
 * The physical queues a @Processor of `queue` serves in this application, as the queue's layout
 * stands now (QueueService.partitionLayout: declared here, else as the partitions registry
 * records it):
 * - an unpartitioned queue: the queue itself;
 * - a partitioned one: every partition of the layout, those past the count included (a count
 *   lowered from 3 to 2 leaves `q#2` to drain), and the queue itself only while new jobs go
 *   there (the count is back to 1) or it still holds jobs to run: pending, scheduled or active
 *   ones, such as those enqueued before the queue was partitioned. Its dead jobs need no loop.
 *
 * The queue itself is left out otherwise so that a worker does not hold a blocked connection on
 * it for nothing; its registry entry is not the test, since the reapers keep a served queue in
 * the registry, and the queue would then be served for ever. One read-only script on the
 * queue's own slot decides, at bootstrap and at each look at the layout (see LayoutFollower),
 * so jobs that still reach it (a producer of an older release, a retry from dead) are served
 * within one look.
 */
export async function physicalQueuesToServe(
  queues: QueueService,
  queue: string,
  alreadyServed: (physical: string) => boolean = () => false,
): Promise<string[]> {
  const layout = await queues.partitionLayout(queue);
  if (!layout.partitioned) return [queue];
  const partitions = layout.physical.filter((name) => name !== queue);
  if (layout.count <= 1 || alreadyServed(queue)) return [queue, ...partitions];
  const counts = await countStates(queues.context(queue));
  const holdsWork = counts.pending + counts.schedule + counts.active > 0;
  return holdsWork ? [queue, ...partitions] : partitions;
}
