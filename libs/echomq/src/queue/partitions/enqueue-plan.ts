import { DEFAULT_LANE } from '../../keyspace';
import type { PartitionLayout, WriteTarget } from './partition-layout';
import { targetOf } from './partition-layout';
import { bucketOf, type RoundRobin } from './partition-routing';

/** What decides a job's partition: its lane, else its idempotency, debounce or throttle key. */
interface RoutedFields {
  readonly lane?: unknown;
  readonly idempotencyKey?: unknown;
  readonly debounce?: { readonly key?: unknown } | null;
  readonly throttle?: { readonly key?: unknown } | null;
}

/**
 * The partition index a job's own fields pin it to, or undefined when nothing does: a named lane
 * (so the lane's order, caps and fairness hold in one partition), else a deduplication key (so
 * one key has one window, in one partition). A lane wins over a key: a key used with two lanes
 * may then name two partitions (docs/partitions.md). Fields of the wrong type pin nothing; the
 * enqueue checks refuse them before anything is sent.
 */
export function pinnedPartition(job: unknown, count: number): number | undefined {
  if (count <= 1 || typeof job !== 'object' || job === null) return undefined;
  const fields = job as RoutedFields;
  if (typeof fields.lane === 'string' && fields.lane !== DEFAULT_LANE)
    return bucketOf(`lane:${fields.lane}`, count);
  const key = [fields.idempotencyKey, fields.debounce?.key, fields.throttle?.key].find(
    (candidate): candidate is string => typeof candidate === 'string',
  );
  return key === undefined ? undefined : bucketOf(`key:${key}`, count);
}

/** One target of a batch and the indices of the items that go there. */
export interface PlannedGroup {
  readonly target: WriteTarget;
  readonly items: number[];
}

/**
 * Where each job of a batch goes. Jobs pinned by a lane or a key go to their partition; the
 * others all go to one partition picked in turn for the whole call, so a batch of unpinned jobs
 * stays one all-or-nothing script call. Groups come in partition order.
 */
export function planEnqueue(
  layout: PartitionLayout,
  jobs: readonly unknown[],
  turns: RoundRobin,
): PlannedGroup[] {
  if (layout.count <= 1)
    return [{ target: targetOf(layout, undefined), items: jobs.map((_, index) => index) }];
  let unpinned: number | undefined;
  const byIndex = new Map<number, number[]>();
  jobs.forEach((job, item) => {
    let index = pinnedPartition(job, layout.count);
    if (index === undefined) index = unpinned ??= turns.pick(layout.count);
    let items = byIndex.get(index);
    if (!items) byIndex.set(index, (items = []));
    items.push(item);
  });
  return [...byIndex.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, items]) => ({ target: targetOf(layout, index), items }));
}

/** The partition for one job (submit, a schedule's key): pinned, else picked in turn. */
export function targetFor(layout: PartitionLayout, job: unknown, turns: RoundRobin): WriteTarget {
  if (layout.count <= 1) return targetOf(layout, undefined);
  return targetOf(layout, pinnedPartition(job, layout.count) ?? turns.pick(layout.count));
}

/**
 * The partition a new schedule of a partitioned queue lives in: its template's lane's, when it
 * names one other than the default (so the lane's occurrences and its other jobs share one
 * partition, which enforces the lane's order and caps), else the one its key hashes to.
 */
export function schedulePartition(key: string, template: unknown, count: number): number {
  const lane =
    typeof template === 'object' && template !== null ? (template as RoutedFields).lane : undefined;
  if (typeof lane === 'string' && lane !== DEFAULT_LANE) return bucketOf(`lane:${lane}`, count);
  return bucketOf(`schedule:${key}`, count);
}
