import { Redis } from 'ioredis';
import { CLUSTER_HOST } from './cluster-node';

/** One node as a node's CLUSTER NODES reply describes it. */
export interface ClusterNodeView {
  readonly id: string;
  readonly port: number;
  readonly master: boolean;
  /** Flagged failed (fail) or suspected (fail?) by the node asked. */
  readonly failing: boolean;
  /** The master's id, for a replica; undefined for a master. */
  readonly masterId?: string;
  /** How many slots it serves (masters). */
  readonly slots: number;
}

/** Parses a CLUSTER NODES reply: `<id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slots...>`. */
export function parseClusterNodes(reply: string): ClusterNodeView[] {
  return reply
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.trim().split(' ');
      const port = Number(/:(\d+)@/.exec(address)?.[1]);
      const flagSet = new Set(flags.split(','));
      const served = slots
        .filter((range) => !range.startsWith('['))
        .reduce((sum, range) => {
          const [from, to = from] = range.split('-').map(Number);
          return sum + (to - from + 1);
        }, 0);
      return {
        id,
        port,
        master: flagSet.has('master'),
        failing: flagSet.has('fail') || flagSet.has('fail?'),
        ...(master !== '-' ? { masterId: master } : {}),
        slots: served,
      };
    });
}

/** How long a cluster step (formation, a failover, a resync) may take before the harness gives up. */
export const CLUSTER_STEP_TIMEOUT_MS = 30_000;
const POLL_MS = 50;

/**
 * Asks `check` on a short-lived connection to the node on `port` every 50 ms until it holds;
 * throws `what` after `timeoutMs`. Polling, because cluster formation, gossip and failovers
 * have no event a test can await. A node that does not answer yet counts as "not yet".
 */
export async function pollNode(
  port: number,
  check: (redis: Redis) => Promise<boolean>,
  what: string,
  timeoutMs = CLUSTER_STEP_TIMEOUT_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const redis = new Redis({
      port,
      host: CLUSTER_HOST,
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      commandTimeout: 2_000,
      // Ending a socket that already closed (a node not up yet) arms a timer of this length.
      disconnectTimeout: 100,
    });
    redis.on('error', () => undefined);
    try {
      await redis.connect();
      if (await check(redis)) return;
    } catch {
      // not up yet, or mid-failover
    } finally {
      redis.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`${what} (node ${port}) within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Whether the node reports cluster_state:ok. */
export async function clusterStateOk(redis: Redis): Promise<boolean> {
  return String(await redis.cluster('INFO')).includes('cluster_state:ok');
}

/** Whether the node is a replica whose link to its master is up and whose sync is done. */
export async function replicaInSync(redis: Redis): Promise<boolean> {
  const info = await redis.info('replication');
  return (
    /role:slave/.test(info) && /master_link_status:up/.test(info) && !/master_sync_in_progress:1/.test(info)
  );
}

/**
 * Waits until the node on `port` reports cluster_state:ok and knows every one of the `masters`
 * masters with its `replicas` replicas (gossip has spread the whole topology to it).
 */
export async function untilFormed(port: number, masters: number, replicas: number): Promise<void> {
  await pollNode(port, clusterStateOk, 'cluster_state:ok not reported');
  await pollNode(
    port,
    async (redis) => {
      const view = parseClusterNodes(String(await redis.cluster('NODES')));
      const shards = view.filter((node) => node.master && node.slots > 0);
      const replicasOf = (id: string): number =>
        view.filter((node) => node.masterId === id && !node.failing).length;
      return shards.length === masters && shards.every((shard) => replicasOf(shard.id) === replicas);
    },
    `not every master seen with ${replicas} replica(s)`,
  );
}
