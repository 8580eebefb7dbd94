import { Cluster, Command } from 'ioredis';
import { BlockingConnection } from '../connection/blocking-connection';
import { reconnectDelay, type RedisConnections } from '../connection/redis-connections';
import type { Confirmation, ConfirmLane, ConfirmRequest } from './confirm-lane';
import { ConfirmationRedirectedError } from './confirm-redirect';

/** The lane of a single server (or the master the sentinels name): everything goes to it. */
const THE_MASTER = 'master';

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
 * on a plain connection to that master (never a cluster client, whose own slot map could send
 * the lane's writes to another node than the one its WAIT asks) and with at most one WAIT in
 * flight, so the queues of one master share a WAIT while a slow replica elsewhere holds none of
 * them up.
 *
 * The command client's map may be out of date: a failover or a migration moved the slot since
 * it last looked. The lane's master then refuses the write unrun (MOVED, ASK, CLUSTERDOWN) and
 * the caller asks again (see ConfirmLane). The script call being confirmed ran on the slot just
 * before, and corrected the map if it met a MOVED; a MOVED met by the confirmation itself (the
 * slot moved in between) has the map read again, so the next try picks the slot's new master.
 *
 * A lane whose master serves no slot any more (replaced in a failover, emptied by a migration)
 * is dropped once idle, so the lanes stay as many as the live masters.
 */
export class ConfirmLanes {
  private readonly lanes = new Map<string, ConfirmLane>();
  /** The masters of the command client's slot map, read again after each refresh of the map. */
  private serving?: Set<string>;

  constructor(
    private readonly connections: RedisConnections,
    private readonly create: LaneFactory,
  ) {
    const client = connections.client;
    if (client instanceof Cluster) client.on('refresh', () => (this.serving = undefined));
  }

  /**
   * Confirms `request` on the lane of the master that serves its key. Rejects with
   * ConfirmationRedirectedError when the cluster did not run it there.
   */
  async submit(request: ConfirmRequest): Promise<Confirmation> {
    const lane = this.laneFor(request.write.key);
    try {
      return await lane.submit(request);
    } catch (error) {
      if (error instanceof ConfirmationRedirectedError && error.redirect === 'MOVED') this.rereadSlots();
      throw error;
    } finally {
      if (lane.idle) this.dropReplaced();
    }
  }

  /** Drops the connection of `key`'s master's lane; its next confirmation opens a fresh one. */
  reset(key: string): void {
    const master = this.masterOf(key);
    if (master !== undefined) this.lanes.get(master)?.reset();
  }

  /** Drops every lane's connection; the next confirmation of each opens a fresh one. */
  resetAll(): void {
    for (const lane of this.lanes.values()) lane.reset();
  }

  /** The lane of the master that serves `key`, made on first use. */
  private laneFor(key: string): ConfirmLane {
    const master = this.masterOf(key);
    if (master === undefined) {
      // Only before the client's first slot map: the script call being confirmed went out on it.
      this.rereadSlots();
      throw new ConfirmationRedirectedError('UNMAPPED', `no master of slot ${slotOf(key)}`);
    }
    let lane = this.lanes.get(master);
    if (!lane) {
      this.dropReplaced();
      const node = master === THE_MASTER ? undefined : master;
      lane = this.create(new BlockingConnection(this.connections, reconnectDelay, node));
      this.lanes.set(master, lane);
    }
    return lane;
  }

  /** `host:port` of the master serving `key`'s slot in the command client's map; undefined when unmapped. */
  private masterOf(key: string): string | undefined {
    const client = this.connections.client;
    if (!(client instanceof Cluster)) return THE_MASTER;
    return client.slots[slotOf(key)]?.[0];
  }

  /** Has the command client read the cluster's slot map again (one refresh at a time, ioredis's own). */
  private rereadSlots(): void {
    const client = this.connections.client;
    if (client instanceof Cluster) client.refreshSlotsCache();
  }

  /** Idle lanes of nodes that serve no slot in the client's map any more. */
  private dropReplaced(): void {
    const client = this.connections.client;
    if (!(client instanceof Cluster)) return;
    for (const [master, lane] of this.lanes) {
      if (lane.idle && !this.serves(client, master)) {
        lane.reset();
        this.lanes.delete(master);
      }
    }
  }

  /**
   * Whether `master` serves a slot in the client's map: by the set read once per refresh of the
   * map, and when that says no, by the map itself (a MOVED updates one slot before the refresh
   * it starts), so a lane is never dropped for a master the map names.
   */
  private serves(client: Cluster, master: string): boolean {
    if (!this.serving) {
      this.serving = new Set<string>();
      for (const nodes of client.slots) if (nodes?.[0]) this.serving.add(nodes[0]);
    }
    return this.serving.has(master) || client.slots.some((nodes) => nodes?.[0] === master);
  }
}

/** ioredis's own slot function (hashtags included): the one its command client routes by. */
function slotOf(key: string): number {
  return new Command('exists', [key]).getSlot();
}
