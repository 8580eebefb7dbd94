import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, RedisServer } from './redis-server';
import { briefly, HOST, pause, POLL_MS, roleOf, STEP_TIMEOUT_MS, type Address } from './sentinel-probe';
import {
  startSentinel,
  stopSentinel,
  untilSentinelReady,
  untilSentinelSeesReplica,
} from './sentinel-process';
import { NODE_ARGS, signalNode, startReplica } from './sentinel-replica';

export type { Address } from './sentinel-probe';
export { linkUp, NODE_ARGS, startReplica } from './sentinel-replica';

export interface SentinelGroupOptions {
  /** The name the sentinels monitor the master under. Default 'echomq'. */
  readonly masterName?: string;
  /** Replicas started beside the master (each with --replicaof). Default 1. */
  readonly replicas?: number;
  /** Sentinel processes. Default 3 (with quorum 2). */
  readonly sentinels?: number;
  /** How long a master must be silent before a sentinel thinks it down. Default 1,000 ms. */
  readonly downAfterMs?: number;
  /** Sentinel's failover-timeout (also the wait before it retries a failed election, doubled). Default 2,000 ms. */
  readonly failoverTimeoutMs?: number;
}

/**
 * A Redis Sentinel deployment on loopback for tests: one master, its replicas (redis-server
 * with --replicaof, see sentinel-replica.ts) and a few redis-sentinel processes watching the
 * master under one name (sentinel-process.ts), with short timeouts so a failover takes a few
 * seconds. Config files live in a temp folder; destroy() stops every process and removes it.
 *
 * A failover is caused the way it happens in production: the master is SIGKILLed
 * (killMaster, or killMasterBehindReplicas for a replica that lags), the sentinels agree it is
 * down and promote a replica; failedOverFrom() waits until SENTINEL get-master-addr-by-name
 * names another master that answers as one (failover() does both). The killed node can come
 * back as a replica of the new master (restartAsReplica), as an orchestrator would bring it
 * back; demoteMaster() orders a failover by hand, the old master staying up.
 */
export class SentinelGroup {
  private readonly sentinelProcesses: ChildProcess[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'echomq-sentinel-'));
  private destroyed = false;

  private constructor(
    readonly masterName: string,
    /** Every data node, by port: the master and the replicas (killed ones removed). */
    private readonly nodes: Map<number, RedisServer>,
    readonly sentinelPorts: readonly number[],
  ) {}

  static async start(options: SentinelGroupOptions = {}): Promise<SentinelGroup> {
    const masterName = options.masterName ?? 'echomq';
    const replicas = options.replicas ?? 1;
    const nodes = new Map<number, RedisServer>();
    const sentinelPorts: number[] = [];
    for (let i = 0; i < (options.sentinels ?? 3); i++) sentinelPorts.push(await freePort());
    const group = new SentinelGroup(masterName, nodes, sentinelPorts);
    try {
      const master = await RedisServer.start({ args: NODE_ARGS });
      nodes.set(master.port, master);
      for (let i = 0; i < replicas; i++) {
        const replica = await startReplica(master.port);
        nodes.set(replica.port, replica);
      }
      const quorum = Math.floor(sentinelPorts.length / 2) + 1;
      for (const port of sentinelPorts) {
        group.sentinelProcesses.push(
          startSentinel({
            dir: group.dir,
            port,
            masterName,
            masterPort: master.port,
            quorum,
            downAfterMs: options.downAfterMs ?? 1_000,
            failoverTimeoutMs: options.failoverTimeoutMs ?? 2_000,
          }),
        );
      }
      // One deadline for the whole group, as for every step.
      const deadline = Date.now() + STEP_TIMEOUT_MS;
      for (const port of sentinelPorts) {
        await untilSentinelReady(port, masterName, replicas, sentinelPorts.length - 1, deadline - Date.now());
      }
      return group;
    } catch (error) {
      await group.destroy();
      throw error;
    }
  }

  /** The sentinels as a connection lists them. */
  get sentinels(): Address[] {
    return this.sentinelPorts.map((port) => ({ host: HOST, port }));
  }

  /** An EchoMQ connection through the sentinels. */
  connection(): { sentinels: Address[]; name: string } {
    return { sentinels: this.sentinels, name: this.masterName };
  }

  /** The master's address, as the first sentinel that answers names it. */
  async masterAddress(): Promise<Address> {
    let lastError: unknown;
    for (const port of this.sentinelPorts) {
      try {
        const reply = await briefly(port, (client) =>
          client.call('SENTINEL', 'get-master-addr-by-name', this.masterName),
        );
        const [host, masterPort] = reply as [string, string];
        return { host, port: Number(masterPort) };
      } catch (error) {
        lastError = error;
      }
    }
    throw new Error(`No sentinel named the master: ${(lastError as Error)?.message}`);
  }

  /** The data node running on `port` (master or replica), if it is alive. */
  node(port: number): RedisServer | undefined {
    return this.nodes.get(port);
  }

  /** The current master's process. */
  async master(): Promise<RedisServer> {
    const { port } = await this.masterAddress();
    const node = this.nodes.get(port);
    if (!node) throw new Error(`The sentinels name ${HOST}:${port}, which this group does not run`);
    return node;
  }

  /** The replicas' processes (every live data node but the master). */
  async replicas(): Promise<RedisServer[]> {
    const { port } = await this.masterAddress();
    return [...this.nodes.values()].filter((node) => node.port !== port);
  }

  /** SIGKILLs the current master; returns its address (the sentinels still name it until they fail over). */
  async killMaster(): Promise<Address> {
    const master = await this.master();
    this.nodes.delete(master.port);
    await master.destroy();
    return { host: HOST, port: master.port };
  }

  /**
   * Waits until the sentinels name a master other than `old` (the +switch-master of a failover)
   * and it answers as a master; returns the new master's address.
   */
  async failedOverFrom(old: Address, timeoutMs = STEP_TIMEOUT_MS): Promise<Address> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const now = await this.masterAddress().catch(() => old);
      if (now.port !== old.port && (await roleOf(now.port)) === 'master') return now;
      if (Date.now() > deadline)
        throw new Error(`No failover from ${old.host}:${old.port} within ${timeoutMs} ms`);
      await pause(POLL_MS);
    }
  }

  /**
   * Kills the master after its replicas fell `lagMs` behind: they are stopped (SIGSTOP), the
   * master drops their links (CLIENT KILL TYPE replica), writes go on for `lagMs` and reach only
   * the master, then it is SIGKILLed and the replicas resumed. What asynchronous replication
   * loses when a master dies with its replicas behind (a slow link, a busy replica), without
   * relying on timing luck. `lagMs` must stay under down-after-milliseconds, so the sentinels
   * still think the replicas healthy and promote one.
   */
  async killMasterBehindReplicas(lagMs: number): Promise<Address> {
    const master = await this.master();
    const replicas = await this.replicas();
    for (const replica of replicas) signalNode(replica, 'SIGSTOP');
    try {
      await briefly(master.port, (client) => client.client('KILL', 'TYPE', 'replica'));
      await pause(lagMs);
      return await this.killMaster();
    } finally {
      for (const replica of replicas) signalNode(replica, 'SIGCONT');
    }
  }

  /** Kills the master and waits for the failover; returns the old and the new master's addresses. */
  async failover(): Promise<{ old: Address; master: Address }> {
    const old = await this.killMaster();
    return { old, master: await this.failedOverFrom(old) };
  }

  /**
   * Starts a data node again on `port` (a killed master), empty, as a replica of the current
   * master, and waits until it is in sync; the sentinels then know it as a replica again.
   */
  async restartAsReplica(port: number): Promise<RedisServer> {
    const master = await this.masterAddress();
    const node = await startReplica(master.port, port);
    this.nodes.set(port, node);
    const deadline = Date.now() + STEP_TIMEOUT_MS;
    for (const sentinel of this.sentinelPorts) {
      await untilSentinelSeesReplica(sentinel, this.masterName, port, deadline - Date.now());
    }
    return node;
  }

  /**
   * A failover ordered by hand (SENTINEL FAILOVER), as an operator does for maintenance: the
   * master stays up and is demoted to a replica of the one promoted (the sentinels then drop its
   * clients). Waits until the sentinels name the new master; returns both addresses.
   */
  async demoteMaster(): Promise<{ old: Address; master: Address }> {
    const old = await this.masterAddress();
    await briefly(this.sentinelPorts[0], (client) => client.call('SENTINEL', 'failover', this.masterName));
    return { old, master: await this.failedOverFrom(old) };
  }

  /** Stops or resumes a process (SIGSTOP / SIGCONT): a replica that stops acknowledging. */
  static signal(node: RedisServer, signal: 'SIGSTOP' | 'SIGCONT'): void {
    signalNode(node, signal);
  }

  /** Stops every process (SIGKILL) and removes the config folder. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await Promise.all(this.sentinelProcesses.map(stopSentinel));
    // SIGKILL ends a SIGSTOPped node too.
    await Promise.all([...this.nodes.values()].map((node) => node.destroy()));
    this.nodes.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
