import { bucketOf } from '@app/echomq/queue/partitions/partition-routing';

/**
 * The first lane name `<prefix>-<n>` (n = 0, 1, ...) whose jobs go to partition `partition` of a
 * queue with `count` partitions: tests pick lanes by where they land, not by a hash they know.
 */
export function laneIn(partition: number, count: number, prefix = 'lane'): string {
  for (let n = 0; ; n++) if (bucketOf(`lane:${prefix}-${n}`, count) === partition) return `${prefix}-${n}`;
}
