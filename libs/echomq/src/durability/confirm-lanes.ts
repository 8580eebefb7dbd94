import { Cluster, Command } from 'ioredis';
import { BlockingConnection } from '../connection/blocking-connection';
import type { RedisConnections } from '../connection/redis-connections';
import type { ConfirmLane } from './confirm-lane';

/** The lane of a single server (or the master the sentinels name): everything goes to it. */
const THE_MASTER = 'master';
/** The lane of a key whose slot the cluster client has no master for yet (before its first slot map). */
const UNMAPPED = 'unmapped';

/** Makes the lane for one master, on a connection of its own. */
export type LaneFactory = (connection: BlockingConnection) => ConfirmLane;

/**
 * The confirmation lanes of one application: one per master that holds writes to confirm.
 *
 * WAIT counts the replicas of the node that runs it, so a confirmation must run on the master
 * that holds the write it confirms. On a single server (or behind sentinels) that is the one
 * master, and every confirmation shares one lane. On a cluster each master holds the slots of
 * its own queues (and node lease keys), so confirmations are grouped by the master that serves
 * their key's slot, as the application's command client maps slots: one lane per master, each
 * with its own connection and at most one WAIT in flight, so the queues of one master share a
 * WAIT while a slow replica elsewhere holds none of them up. A map that is out of date (a
 * failover just moved the slot) sends a write to a node that no longer serves it: Redis refuses
 * it unrun and the caller asks again (see ConfirmLane), by which time the command client,
 * redirected by its own traffic on the slot, maps it anew.
 *
 * A lane whose master no longer serves any slot (replaced in a failover) is dropped once idle,
 * so the lanes stay as many as the live masters.
 */
export class ConfirmLanes {
  private readonly lanes = new Map<string, ConfirmLane>();

  constructor(
    private readonly connections: RedisConnections,
    private readonly create: LaneFactory,
  ) {}

  /** The lane of the master that serves `key`. */
  laneFor(key: string): ConfirmLane {
    const master = this.masterOf(key);
    let lane = this.lanes.get(master);
    if (!lane) {
      this.dropReplaced();
      lane = this.create(new BlockingConnection(this.connections));
      this.lanes.set(master, lane);
    }
    return lane;
  }

  /** Drops every lane's connection; the next confirmation of each opens a fresh one. */
  resetAll(): void {
    for (const lane of this.lanes.values()) lane.reset();
  }

  private masterOf(key: string): string {
    const client = this.connections.client;
    if (!(client instanceof Cluster)) return THE_MASTER;
    // ioredis's own slot function (hashtags included): the one its pipelines route by.
    const slot = new Command('exists', [key]).getSlot();
    return client.slots[slot]?.[0] ?? UNMAPPED;
  }

  /** Idle lanes of nodes that serve no slot in the client's map any more. */
  private dropReplaced(): void {
    const client = this.connections.client;
    if (!(client instanceof Cluster)) return;
    const serving = new Set<string>();
    for (const nodes of client.slots) if (nodes?.[0]) serving.add(nodes[0]);
    for (const [master, lane] of this.lanes) {
      if (lane.idle && !serving.has(master)) {
        lane.reset();
        this.lanes.delete(master);
      }
    }
  }
}
