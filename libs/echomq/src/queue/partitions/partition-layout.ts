import { partitionTagOf } from '../../ids';
import { parsePhysicalQueue, partitionQueueName } from '../../keyspace';

/**
 * Where one queue's jobs live: `count` partitions take new jobs (1: the queue itself, as an
 * unpartitioned queue), and `physical` lists every physical queue that may hold its jobs,
 * which reads and workers cover. A queue whose count was lowered keeps its higher partitions
 * there for as long as the registry records the most it ever had, that is until the whole
 * queue is obliterated (docs/partitions.md, "Changing the count").
 */
export interface PartitionLayout {
  /** The queue's own (logical) name, or a partition's when one was addressed directly. */
  readonly queue: string;
  /** Partitions new jobs spread over; 1 means unpartitioned (new jobs go to the queue itself). */
  readonly count: number;
  /** Every physical queue that may hold jobs of the queue: its partitions, and itself. */
  readonly physical: readonly string[];
  /** Whether the queue is or was partitioned (physical holds more than the queue itself). */
  readonly partitioned: boolean;
}

/**
 * The layout of `queue` declared with `count` partitions and recorded with at most `most`.
 * A partitioned queue also covers the queue itself: jobs enqueued before it was partitioned
 * (or after its count went back to 1) are there.
 */
export function partitionLayout(queue: string, count: number, most: number): PartitionLayout {
  const span = Math.max(count, most);
  if (span <= 1) return { queue, count: 1, physical: [queue], partitioned: false };
  const physical = [queue];
  for (let index = 0; index < span; index++) physical.push(partitionQueueName(queue, index));
  return { queue, count, physical, partitioned: true };
}

/** A partition addressed by its own name (`emails#2`): a queue of its own, with no fan-out. */
export function directLayout(physical: string): PartitionLayout {
  return { queue: physical, count: 1, physical: [physical], partitioned: false };
}

/** Where a new job goes: the physical queue, and the partition index its id must carry (none when unpartitioned). */
export interface WriteTarget {
  readonly queue: string;
  readonly tag?: number;
}

/** The write target of partition `index` (of a partitioned layout), or of the queue itself. */
export function targetOf(layout: PartitionLayout, index: number | undefined): WriteTarget {
  if (layout.count <= 1 || index === undefined) {
    // A partition addressed by its own name: its jobs carry its index all the same.
    const own = parsePhysicalQueue(layout.queue)?.partition;
    return own === undefined ? { queue: layout.queue } : { queue: layout.queue, tag: own };
  }
  return { queue: partitionQueueName(layout.queue, index), tag: index };
}

/**
 * The physical queues that may hold job `id`, most likely first: the partition its id names,
 * then the queue itself (a job from before the queue was partitioned, whose id names a
 * partition by chance). Once the count is back to 1, new jobs go to the queue itself, so it
 * comes first. Never more than two lookups, and one for an unpartitioned queue.
 */
export function candidatesForId(layout: PartitionLayout, id: string): string[] {
  if (!layout.partitioned) return [layout.queue];
  const tag = partitionTagOf(id);
  const span = layout.physical.length - 1;
  if (tag === undefined || tag >= span) return [layout.queue];
  const partition = partitionQueueName(layout.queue, tag);
  return layout.count <= 1 ? [layout.queue, partition] : [partition, layout.queue];
}

/**
 * The physical queues a partitioned queue's split limits (globalConcurrency, rateLimit) are
 * shared over, in order: its partitions, draining ones included. The queue itself is one of them
 * only while new jobs go there (count 1); otherwise it holds only jobs from before the queue was
 * partitioned, which drain under the limits it had then (docs/partitions.md).
 */
export function limitTargets(layout: PartitionLayout): readonly string[] {
  if (!layout.partitioned || layout.count <= 1) return layout.physical;
  return layout.physical.filter((physical) => physical !== layout.queue);
}
