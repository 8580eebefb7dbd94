/** A queue to read in a metrics snapshot or a dashboard overview, and how many physical queues reading it touches. */
export interface WeightedQueue {
  readonly queue: string;
  /** Its physical queues: 1 for an unpartitioned queue, its partitions and itself for a partitioned one. */
  readonly physical: number;
}

/**
 * Packs queues, in their order, into groups read together, so that one group never sends the
 * reads of more than `max` physical queues at once: a partitioned queue weighs as many as it has
 * physical queues. A queue heavier than `max` alone is a group of its own (at most
 * MAX_PARTITIONS + 1 physical queues), never split: its reads are summed into one answer, and a
 * half-read queue would report wrong totals.
 */
export function packReadGroups(queues: readonly WeightedQueue[], max: number): string[][] {
  const groups: string[][] = [];
  let group: string[] = [];
  let weight = 0;
  for (const { queue, physical } of queues) {
    const cost = Math.max(1, physical);
    if (group.length > 0 && weight + cost > max) {
      groups.push(group);
      group = [];
      weight = 0;
    }
    group.push(queue);
    weight += cost;
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
