import type { Redis } from 'ioredis';
import { queueKeys } from '@app/echomq/internal';
import type { ClusterMaster, RedisCluster } from './redis-cluster';
import { uniqueQueue } from './redis';

/** A queue name and the master that serves its slot. */
export interface PlacedQueue {
  readonly queue: string;
  readonly slot: number;
  readonly master: ClusterMaster;
}

/**
 * `count` fresh queue names whose slots are served by `count` different masters, found by
 * asking the cluster (a queue's slot is its name's hash, so a few random names cover the masters).
 */
export async function queuesOnDistinctMasters(
  cluster: RedisCluster,
  count: number,
  prefix = 'q',
): Promise<PlacedQueue[]> {
  const placed: PlacedQueue[] = [];
  for (let tries = 0; tries < 1_000 && placed.length < count; tries++) {
    const queue = uniqueQueue(prefix);
    const slot = await cluster.slotOf(queueKeys(queue).pending);
    const master = await cluster.ownerOf(slot);
    if (!placed.some((each) => each.master.id === master.id)) placed.push({ queue, slot, master });
  }
  if (placed.length < count) throw new Error(`no ${count} queues on ${count} different masters`);
  return placed;
}

/** A fresh queue name whose slot is served by the master on `port`. */
export async function queueOnMaster(cluster: RedisCluster, port: number, prefix = 'q'): Promise<string> {
  for (let tries = 0; tries < 1_000; tries++) {
    const queue = uniqueQueue(prefix);
    if ((await cluster.ownerOf(await cluster.slotOf(queueKeys(queue).pending))).port === port) return queue;
  }
  throw new Error(`no queue on the master ${port}`);
}

/** Every key matching `pattern` on one node (SCAN, not KEYS, out of habit; the node is tiny). */
export async function scanNode(cluster: RedisCluster, port: number, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await cluster.admin(port).scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== '0');
  return found;
}

/**
 * A connection to a replica of the master on `masterPort` that reads its own copy (READONLY):
 * what a test asserts about replication it reads on the replica itself.
 */
export async function replicaReader(cluster: RedisCluster, masterPort: number): Promise<Redis> {
  const reader = cluster.admin(await cluster.replicaOf(masterPort));
  await reader.readonly();
  return reader;
}

/**
 * SIGSTOPs the replica of the master serving `queue`, once it has acknowledged everything written
 * so far (a write in the queue's slot, then WAIT): its acknowledged offset is then as recent as it
 * gets, so a WAIT that covers no new write would count it at once, and only a WAIT after a new
 * write waits. Returns the replica's port (resume it with cluster.faults.resume).
 */
export async function pauseReplicaOf(cluster: RedisCluster, placed: PlacedQueue): Promise<number> {
  const replica = await cluster.replicaOf(placed.master.port);
  const master = cluster.admin(placed.master.port);
  await master.set(`${queueKeys(placed.queue).base}test-acknowledged`, Date.now(), 'PX', 60_000);
  if ((await master.wait(1, 10_000)) !== 1)
    throw new Error('the replica did not acknowledge before the pause');
  cluster.faults.pause(replica);
  return replica;
}

/** Connections on `masterPort` blocked in WAIT right now (CLIENT LIST: cmd=wait, flag b). */
export async function blockedInWait(cluster: RedisCluster, masterPort: number): Promise<number> {
  const list = String(await cluster.admin(masterPort).client('LIST'));
  return list.split('\n').filter((line) => / cmd=wait /.test(line) && / flags=\S*b/.test(line)).length;
}
