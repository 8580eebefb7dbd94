import { partitionQueueName, queueKeys } from '@app/echomq/internal';
import type { BenchCluster } from './partitions-cluster';

/** Names tried after the queue's own when looking for one whose partitions spread. */
const MAX_NAME_TRIES = 200;

/** One physical queue and the master (index in the cluster's master order) its slot is on. */
export interface Placement {
  readonly physical: string;
  readonly master: number;
}

/**
 * The physical queues of `queue` with `partitions`: the queue itself when unpartitioned, else
 * its partitions (the queue's own name is covered too, for jobs from before: it stays empty here).
 */
export function physicalQueues(queue: string, partitions: number): string[] {
  if (partitions <= 1) return [queue];
  return [queue, ...Array.from({ length: partitions }, (_, index) => partitionQueueName(queue, index))];
}

export async function placementOf(
  cluster: BenchCluster,
  queue: string,
  partitions: number,
): Promise<Placement[]> {
  return Promise.all(
    physicalQueues(queue, partitions).map(async (physical) => ({
      physical,
      master: await cluster.masterIndexOf(queueKeys(physical).pending),
    })),
  );
}

/**
 * The queue name to measure: `base` itself, or with `spread` the first of base, base1, base2,
 * ... whose `partitions` partitions land on min(partitions, masters) different masters. A
 * partition's master is its name's hash slot, so three partitions on three masters all land
 * apart for only 2 names in 9; without the search the largest count could measure two shards.
 */
export async function chooseQueue(
  cluster: BenchCluster,
  base: string,
  partitions: number,
  spread: boolean,
): Promise<string> {
  if (!spread || partitions <= 1) return base;
  const wanted = Math.min(partitions, cluster.masters.length);
  for (let attempt = 0; attempt <= MAX_NAME_TRIES; attempt++) {
    const name = attempt === 0 ? base : `${base}${attempt}`;
    const placed = (await placementOf(cluster, name, partitions)).slice(1);
    if (new Set(placed.map((place) => place.master)).size === wanted) return name;
  }
  throw new Error(`no name from ${base} to ${base}${MAX_NAME_TRIES} spreads ${partitions} partitions`);
}

/** Per master, summed over the physical queues it serves. */
async function perMaster(
  cluster: BenchCluster,
  placement: readonly Placement[],
  read: (physical: string) => Promise<number>,
): Promise<number[]> {
  const totals = cluster.masters.map(() => 0);
  const values = await Promise.all(placement.map((place) => read(place.physical)));
  placement.forEach((place, index) => (totals[place.master] += values[index]));
  return totals;
}

/** Jobs waiting in each master's partitions (after a prefill). */
export function pendingPerMaster(cluster: BenchCluster, placement: readonly Placement[]): Promise<number[]> {
  return perMaster(cluster, placement, async (physical) => {
    const { pending } = queueKeys(physical);
    return (await cluster.ownerOf(pending)).zcard(pending);
  });
}

/** Jobs completed in each master's partitions since the last flush (the queues' `completed` counters). */
export function completedPerMaster(
  cluster: BenchCluster,
  placement: readonly Placement[],
): Promise<number[]> {
  return perMaster(cluster, placement, async (physical) => {
    const { metrics } = queueKeys(physical);
    return Number((await (await cluster.ownerOf(metrics)).hget(metrics, 'completed')) ?? 0);
  });
}

/** Jobs pending, active or scheduled anywhere in the queue (0 after a clean drain). */
export async function unfinished(cluster: BenchCluster, placement: readonly Placement[]): Promise<number> {
  const counts = await perMaster(cluster, placement, async (physical) => {
    const keys = queueKeys(physical);
    const owner = await cluster.ownerOf(keys.pending);
    const [pending, active, schedule] = await Promise.all([
      owner.zcard(keys.pending),
      owner.zcard(keys.active),
      owner.zcard(keys.schedule),
    ]);
    return pending + active + schedule;
  });
  return counts.reduce((a, b) => a + b, 0);
}
