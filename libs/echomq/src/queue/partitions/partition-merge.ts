import type { JobId } from '../../ids';
import type { LaneView } from '../../scripts/lane-reads';

/**
 * How the reads of a partitioned queue's partitions become the queue's one answer. Ids are
 * globally ordered by their bytes (mint order, whatever the partition), so newest-first lists
 * merge exactly; lists ordered by score (active by lease, schedule by run-at) merge on their
 * scores.
 */

/** Sums numeric records field by field (depths, transition counters). */
export function sumFields<K extends string>(
  records: readonly Readonly<Record<K, number>>[],
): Record<K, number> {
  const sum = {} as Record<K, number>;
  for (const record of records) {
    for (const [field, value] of Object.entries(record) as [K, number][])
      sum[field] = (sum[field] ?? 0) + value;
  }
  return sum;
}

/** The `limit` newest ids of lists that are each newest first (byte order, descending). */
export function newestFirst(lists: readonly (readonly JobId[])[], limit: number): JobId[] {
  return lists
    .flat()
    .sort((a, b) => (a < b ? 1 : a > b ? -1 : 0))
    .slice(0, limit);
}

/** The `limit` soonest members of lists of [id, score] pairs (each list soonest first). */
export function soonestFirst(lists: readonly (readonly [JobId, number])[][], limit: number): JobId[] {
  return lists
    .flat()
    .sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .slice(0, limit)
    .map(([id]) => id);
}

/** Lane holds of several partitions: each lane once, with its latest hold. */
export function latestHolds(holds: readonly Readonly<Record<string, Date>>[]): Record<string, Date> {
  const merged: Record<string, Date> = {};
  for (const each of holds) {
    for (const [lane, until] of Object.entries(each))
      if (!merged[lane] || until > merged[lane]) merged[lane] = until;
  }
  return Object.fromEntries(Object.entries(merged).sort(([, a], [, b]) => a.getTime() - b.getTime()));
}

/**
 * Lanes of several partitions, each once by name (byte order): its jobs summed, paused or held
 * when it is in any partition, its settings as the partition with its jobs has them.
 */
export function mergeLanes(lists: readonly (readonly LaneView[])[]): LaneView[] {
  const byName = new Map<string, LaneView>();
  for (const list of lists) {
    for (const lane of list) {
      const seen = byName.get(lane.lane);
      if (!seen) {
        byName.set(lane.lane, lane);
        continue;
      }
      const busier = lane.pending + lane.active > seen.pending + seen.active ? lane : seen;
      byName.set(lane.lane, {
        ...busier,
        pending: seen.pending + lane.pending,
        active: seen.active + lane.active,
        paused: seen.paused || lane.paused,
        held: seen.held || lane.held,
      });
    }
  }
  return [...byName.values()].sort((a, b) => (a.lane < b.lane ? -1 : a.lane > b.lane ? 1 : 0));
}

/** Recent completions of several partitions, newest first, at most `limit`. */
export function newestCompletions<T extends { readonly completedAt: Date; readonly id: JobId }>(
  lists: readonly (readonly T[])[],
  limit: number,
): T[] {
  return lists
    .flat()
    .sort((a, b) => b.completedAt.getTime() - a.completedAt.getTime() || (a.id < b.id ? 1 : -1))
    .slice(0, limit);
}
