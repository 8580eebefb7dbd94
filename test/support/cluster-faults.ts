import type { ClusterNode } from './cluster-node';
import { clusterStateOk, parseClusterNodes, pollNode, replicaInSync } from './cluster-topology';
import type { ClusterMaster, RedisCluster } from './redis-cluster';

/**
 * The faults a test inflicts on the nodes of a RedisCluster, by pid: kill() SIGKILLs one (a
 * master's replica then takes over, see waitForPromotion), pause()/resume() SIGSTOP and SIGCONT
 * one, restart() brings a killed node back on its port (it rejoins, a replaced master as the new
 * master's replica). Reached as `cluster.faults`.
 */
export class ClusterFaults {
  /** A slot each killed master served when it was killed: where to look for its successor. */
  private readonly servedByKilled = new Map<number, number>();
  /** Nodes stopped with pause(): running, but they answer nothing, so nobody asks them. */
  private readonly paused = new Set<number>();

  constructor(
    private readonly cluster: RedisCluster,
    private readonly processes: ReadonlyMap<number, ClusterNode>,
    /** Closes the cluster's admin connection to a node that is about to die. */
    private readonly dropAdmin: (port: number) => void,
  ) {}

  /** Whether the node on `port` is stopped by pause(). */
  isPaused(port: number): boolean {
    return this.paused.has(port);
  }

  /** SIGKILLs the node on `port` by its pid (a master: its replica takes over, see waitForPromotion). */
  async kill(port: number): Promise<void> {
    const node = this.node(port);
    const served = (await this.cluster.topology()).find(
      (view) => view.port === port && view.master && view.slots > 0,
    );
    if (served) this.servedByKilled.set(port, await this.firstSlotOf(port));
    this.dropAdmin(port);
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
    for (const via of this.cluster.answering()) {
      await pollNode(
        via,
        async (redis) =>
          (await clusterStateOk(redis)) && (await this.cluster.ownerOf(slot, via)).port !== deadPort,
        `the slots of ${deadPort} not taken over`,
        timeoutMs,
      );
    }
    return this.cluster.ownerOf(slot);
  }

  /** Polls until the master on `masterPort` has a replica that is in sync (after a restart() rejoined it). */
  async waitForReplica(masterPort: number, timeoutMs?: number): Promise<number> {
    const id = await this.cluster.nodeId(masterPort);
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

  private node(port: number): ClusterNode {
    const node = this.processes.get(port);
    if (!node) throw new Error(`port ${port} is not a node of this cluster`);
    return node;
  }

  private async firstSlotOf(port: number): Promise<number> {
    const ranges = await this.cluster.admin(port).cluster('SLOTS');
    const own = ranges.find(([, , [, owner]]) => Number(owner) === port);
    if (!own) throw new Error(`node ${port} serves no slot`);
    return own[0];
  }
}
