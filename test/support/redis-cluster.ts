import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { ClusterFaults } from './cluster-faults';
import { SlotMigration, type DrainOptions, type MigrationProgress } from './cluster-migration';
import { CLUSTER_HOST, ClusterNode, freeClusterPort, REPLICATED_NODE_ARGS } from './cluster-node';
import {
  parseClusterNodes,
  pollNode,
  replicaInSync,
  untilFormed,
  type ClusterNodeView,
} from './cluster-topology';

export { ClusterFaults } from './cluster-faults';
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
 * Processes are started and stopped by pid; `faults` kills, pauses and restarts them (see
 * ClusterFaults). A spec starts one with clusterPerSuite (cluster-suite.ts), which destroys it
 * even when its start outlives the spec's beforeAll.
 */
export class RedisCluster {
  /** One admin connection per node, for the cluster commands a test or a migration sends. */
  private readonly admins = new Map<number, Redis>();
  private readonly ids = new Map<number, string>();
  /** SIGKILL, SIGSTOP / SIGCONT and restarts of its nodes. */
  readonly faults: ClusterFaults;

  private constructor(
    /** Every node's port, in creation order (masters only: the masters). */
    readonly ports: readonly number[],
    private readonly processes: ReadonlyMap<number, ClusterNode>,
    private readonly dir: string,
  ) {
    this.faults = new ClusterFaults(this, processes, (port) => {
      this.admins.get(port)?.disconnect();
      this.admins.delete(port);
    });
  }

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
    for (let i = 0; i < masters * (1 + replicas); i++) ports.push(await freeClusterPort(ports));
    const processes = new Map(ports.map((port) => [port, new ClusterNode(port, dir, args)]));
    const cluster = new RedisCluster(ports, processes, dir);
    try {
      for (const node of processes.values()) await node.start();
      const pong = async (redis: Redis): Promise<boolean> => (await redis.ping()) === 'PONG';
      for (const port of ports) await pollNode(port, pong, 'no PONG');
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
      // Why a node died (a bus port taken, a bad argument), read before destroy() removes the logs.
      const exited = [...processes.values()].filter((node) => !node.running && node.pid !== undefined);
      const logs = exited.map((node) => `redis-server ${node.port} exited; its log ends:\n${node.logTail()}`);
      await cluster.destroy();
      if (logs.length > 0) (error as Error).message += `\n${logs.join('\n')}`;
      throw error;
    }
    return cluster;
  }

  /**
   * A plain (non-cluster) connection to one node, opened on first use and closed by faults.kill() or
   * destroy(). Plain, because admin commands (SETSLOT, GETKEYSINSLOT, MIGRATE, READONLY reads on
   * a replica) are about that node, and a cluster client would route or redirect them.
   */
  admin(port: number): Redis {
    if (!this.processes.has(port)) throw new Error(`port ${port} is not a node of this cluster`);
    let redis = this.admins.get(port);
    if (!redis) {
      // No reconnects and no retries: a node that is gone should fail the test at once.
      redis = new Redis({
        port,
        host: CLUSTER_HOST,
        retryStrategy: () => null,
        maxRetriesPerRequest: 0,
        // Ending a socket that already closed (a node killed) arms a timer of this length.
        disconnectTimeout: 100,
      });
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

  /** Stops every process by pid (SIGKILL ends a stopped one too) and removes the folder. */
  async destroy(): Promise<void> {
    for (const redis of this.admins.values()) redis.disconnect();
    this.admins.clear();
    await Promise.all([...this.processes.values()].map((node) => node.kill()));
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Nodes whose process runs and is not paused: the ones a question gets an answer from. */
  answering(): number[] {
    return this.ports.filter((port) => this.processes.get(port)!.running && !this.faults.isPaused(port));
  }
}
