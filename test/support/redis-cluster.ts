import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { SlotMigration, type DrainOptions, type MigrationProgress } from './cluster-migration';
import { CLUSTER_HOST, ClusterNode, REPLICATED_NODE_ARGS } from './cluster-node';
import {
  clusterStateOk,
  parseClusterNodes,
  pollNode,
  replicaInSync,
  untilFormed,
  type ClusterNodeView,
} from './cluster-topology';
import { freePort } from './redis-server';

export { SlotMigration, type DrainOptions, type MigrationProgress } from './cluster-migration';
export type { ClusterNodeView } from './cluster-topology';

/** One master of the cluster: its node id (as CLUSTER NODES names it) and its address. */
export interface ClusterMaster {
  readonly id: string;
  readonly host: string;
  readonly port: number;
}

export interface RedisClusterOptions {
  /** Replicas per master (redis-cli --cluster-replicas). Default 0: masters only. */
  readonly replicas?: number;
  /**
   * cluster-node-timeout of every node. Default 1,000 ms with replicas (a master SIGKILLed is
   * replaced in about two seconds), Redis's own 15,000 ms without (nothing to fail over to, and a
   * busy test machine should never see a master flagged as failed).
   */
  readonly nodeTimeoutMs?: number;
}

/** cluster-node-timeout of a cluster with replicas, unless told otherwise. */
export const FAST_NODE_TIMEOUT_MS = 1_000;

/**
 * A real Redis Cluster of throwaway redis-server processes on loopback (no persistence), created
 * with `redis-cli --cluster create`: masters only by default, or each master with its replicas.
 * Processes are started and stopped by pid: kill() SIGKILLs one (a master's replica then takes
 * over, see waitForPromotion), pause()/resume() SIGSTOP and SIGCONT one, restart() brings a killed
 * node back on its port (it rejoins, a replaced master as the new master's replica).
 */
export class RedisCluster {
  /** One admin connection per node, for the cluster commands a test or a migration sends. */
  private readonly admins = new Map<number, Redis>();
  private readonly ids = new Map<number, string>();
  /** A slot each killed master served when it was killed: where to look for its successor. */
  private readonly servedByKilled = new Map<number, number>();
  /** Nodes stopped with pause(): running, but they answer nothing, so nobody asks them. */
  private readonly paused = new Set<number>();

  private constructor(
    /** Every node's port, in creation order (masters only: the masters). */
    readonly ports: readonly number[],
    private readonly processes: ReadonlyMap<number, ClusterNode>,
    private readonly dir: string,
  ) {}

  /** Seed nodes for a client: every node that is running (and not paused). */
  get nodes(): { host: string; port: number }[] {
    return this.answering().map((port) => ({ host: CLUSTER_HOST, port }));
  }

  static async start(masters = 3, options: RedisClusterOptions = {}): Promise<RedisCluster> {
    const replicas = options.replicas ?? 0;
    const nodeTimeoutMs = options.nodeTimeoutMs ?? (replicas > 0 ? FAST_NODE_TIMEOUT_MS : undefined);
    const args = [
      ...(replicas > 0 ? REPLICATED_NODE_ARGS : []),
      ...(nodeTimeoutMs === undefined ? [] : ['--cluster-node-timeout', String(nodeTimeoutMs)]),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'echomq-cluster-'));
    const ports: number[] = [];
    for (let i = 0; i < masters * (1 + replicas); i++) ports.push(await freePort());
    const processes = new Map(ports.map((port) => [port, new ClusterNode(port, dir, args)]));
    const cluster = new RedisCluster(ports, processes, dir);
    try {
      for (const node of processes.values()) await node.start();
      for (const port of ports)
        await pollNode(port, async (redis) => (await redis.ping()) === 'PONG', 'no PONG');
      const created = spawnSync(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...ports.map((port) => `${CLUSTER_HOST}:${port}`),
          '--cluster-replicas',
          String(replicas),
          '--cluster-yes',
        ],
        { encoding: 'utf8' },
      );
      if (created.status !== 0)
        throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
      for (const port of ports) await untilFormed(port, masters, replicas);
      for (const port of ports) cluster.ids.set(port, String(await cluster.admin(port).cluster('MYID')));
      for (const node of await cluster.topology()) {
        if (!node.master) await pollNode(node.port, replicaInSync, 'replica not in sync');
      }
    } catch (error) {
      await cluster.destroy();
      throw error;
    }
    return cluster;
  }

  /**
   * A plain (non-cluster) connection to one node, opened on first use and closed by kill() or
   * destroy(). Plain, because admin commands (SETSLOT, GETKEYSINSLOT, MIGRATE, READONLY reads on
   * a replica) are about that node, and a cluster client would route or redirect them.
   */
  admin(port: number): Redis {
    if (!this.processes.has(port)) throw new Error(`port ${port} is not a node of this cluster`);
    let redis = this.admins.get(port);
    if (!redis) {
      // No reconnects and no retries: a node that is gone should fail the test at once.
      redis = new Redis({ port, host: CLUSTER_HOST, retryStrategy: () => null, maxRetriesPerRequest: 0 });
      redis.on('error', () => undefined);
      this.admins.set(port, redis);
    }
    return redis;
  }

  /** The node id of the node on `port` (read once at start: ids survive restarts). */
  async nodeId(port: number): Promise<string> {
    const id = this.ids.get(port);
    if (id === undefined) throw new Error(`port ${port} is not a node of this cluster`);
    return id;
  }

  /** Every node as the node on `viaPort` (default: the first running one) sees it. */
  async topology(viaPort = this.answering()[0]): Promise<ClusterNodeView[]> {
    return parseClusterNodes(String(await this.admin(viaPort).cluster('NODES')));
  }

  /** Every master that serves slots and is not flagged failing, in port order. */
  async masters(): Promise<ClusterMaster[]> {
    return (await this.topology())
      .filter((node) => node.master && node.slots > 0 && !node.failing)
      .sort((a, b) => a.port - b.port)
      .map(({ id, port }) => ({ id, host: CLUSTER_HOST, port }));
  }

  /** The port of a replica of the master on `masterPort` that is not flagged failing. */
  async replicaOf(masterPort: number): Promise<number> {
    const id = await this.nodeId(masterPort);
    const replica = (await this.topology()).find((node) => node.masterId === id && !node.failing);
    if (!replica) throw new Error(`the master on ${masterPort} has no replica`);
    return replica.port;
  }

  /** The hash slot of a key, as the server computes it (hashtags included). */
  async slotOf(key: string): Promise<number> {
    return Number(await this.admin(this.answering()[0]).cluster('KEYSLOT', key));
  }

  /** The master that owns `slot` in the view of the node on `viaPort` (default: the first running node). */
  async ownerOf(slot: number, viaPort = this.answering()[0]): Promise<ClusterMaster> {
    const ranges = await this.admin(viaPort).cluster('SLOTS');
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`node ${viaPort} sees no owner for slot ${slot}`);
    const [, , [host, port, id]] = range;
    return { id, host, port: Number(port) };
  }

  /** The keys of `slot` stored on the node on `port` (at most `max`). */
  async keysInSlot(slot: number, port: number, max = 100_000): Promise<string[]> {
    return this.admin(port).cluster('GETKEYSINSLOT', slot, max);
  }

  /** Polls every running master until each reports `port` as the owner of `slot` (gossip has no event to await). */
  async waitForOwner(slot: number, port: number): Promise<void> {
    for (const via of (await this.masters()).map((master) => master.port)) {
      await pollNode(
        via,
        async () => (await this.ownerOf(slot, via)).port === port,
        `slot ${slot} not on ${port}`,
      );
    }
  }

  /** Opens a migration of `slot` from its owner to the master on `toPort` (see SlotMigration.begin). */
  beginMigration(slot: number, toPort: number): Promise<SlotMigration> {
    return SlotMigration.begin(this, slot, toPort);
  }

  /** The whole migration in one call: begin, drain (with the hook between batches), finish. */
  async migrateSlot(slot: number, toPort: number, options: DrainOptions = {}): Promise<MigrationProgress> {
    const migration = await this.beginMigration(slot, toPort);
    const progress = await migration.drain(options);
    await migration.finish();
    return progress;
  }

  /** SIGKILLs the node on `port` by its pid (a master: its replica takes over, see waitForPromotion). */
  async kill(port: number): Promise<void> {
    const node = this.node(port);
    const served = (await this.topology()).find(
      (view) => view.port === port && view.master && view.slots > 0,
    );
    if (served) this.servedByKilled.set(port, await this.firstSlotOf(port));
    this.admins.get(port)?.disconnect();
    this.admins.delete(port);
    await node.kill();
    this.paused.delete(port);
  }

  /** SIGSTOPs the node on `port`: it answers nothing (replicates nothing) until resume(). */
  pause(port: number): void {
    this.node(port).signal('SIGSTOP');
    this.paused.add(port);
  }

  resume(port: number): void {
    this.node(port).signal('SIGCONT');
    this.paused.delete(port);
  }

  /** Starts a killed node again on its port, empty; resolves once it answers (it then rejoins by gossip). */
  async restart(port: number): Promise<void> {
    await this.node(port).start();
    await pollNode(port, async (redis) => (await redis.ping()) === 'PONG', 'no PONG after restart');
  }

  /**
   * Polls until the slots of the master killed on `deadPort` are served by another master (its
   * replica, promoted) in the view of every running node, each reporting cluster_state:ok again;
   * returns the new master.
   */
  async waitForPromotion(deadPort: number, timeoutMs?: number): Promise<ClusterMaster> {
    const slot = this.servedByKilled.get(deadPort);
    if (slot === undefined) throw new Error(`no master was killed on ${deadPort}`);
    for (const via of this.answering()) {
      await pollNode(
        via,
        async (redis) => (await clusterStateOk(redis)) && (await this.ownerOf(slot, via)).port !== deadPort,
        `the slots of ${deadPort} not taken over`,
        timeoutMs,
      );
    }
    return this.ownerOf(slot);
  }

  /** Polls until the master on `masterPort` has a replica that is in sync (after a restart() rejoined it). */
  async waitForReplica(masterPort: number, timeoutMs?: number): Promise<number> {
    const id = await this.nodeId(masterPort);
    let replica: number | undefined;
    await pollNode(
      masterPort,
      async (redis) => {
        const view = parseClusterNodes(String(await redis.cluster('NODES')));
        replica = view.find((node) => node.masterId === id && !node.failing)?.port;
        return replica !== undefined && /slave0:.*state=online/.test(await redis.info('replication'));
      },
      `no replica of ${masterPort} in sync`,
      timeoutMs,
    );
    await pollNode(replica!, replicaInSync, 'the replica not in sync', timeoutMs);
    return replica!;
  }

  /** Stops every process by pid (SIGKILL ends a stopped one too) and removes the folder. */
  async destroy(): Promise<void> {
    for (const redis of this.admins.values()) redis.disconnect();
    this.admins.clear();
    await Promise.all([...this.processes.values()].map((node) => node.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  private node(port: number): ClusterNode {
    const node = this.processes.get(port);
    if (!node) throw new Error(`port ${port} is not a node of this cluster`);
    return node;
  }

  /** Nodes whose process runs and is not paused: the ones a question gets an answer from. */
  private answering(): number[] {
    return this.ports.filter((port) => this.processes.get(port)!.running && !this.paused.has(port));
  }

  private async firstSlotOf(port: number): Promise<number> {
    const ranges = await this.admin(port).cluster('SLOTS');
    const own = ranges.find(([, , [, owner]]) => Number(owner) === port);
    if (!own) throw new Error(`node ${port} serves no slot`);
    return own[0];
  }
}
