import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort } from '../test/support/redis-server';
import { sleep } from './support/clock';
import { parseInfo } from './support/redis-info';

const HOST = '127.0.0.1';
const READY_TIMEOUT_MS = 30_000;

/** One master of the benchmark's cluster, and the slot ranges it serves. */
export interface BenchMaster {
  readonly port: number;
  readonly ranges: readonly (readonly [from: number, to: number])[];
}

/**
 * The benchmark's own Redis Cluster: `masters` redis-server processes on loopback, no replicas,
 * no persistence, joined with `redis-cli --cluster create` (which splits the 16,384 slots in
 * equal ranges). Each master gets one plain admin connection: INFO and FLUSHALL are about one
 * node, and reads of a key go to the master that serves its slot. Stopped by pid.
 */
export class BenchCluster {
  private masterList: BenchMaster[] = [];

  private constructor(
    private readonly dir: string,
    private readonly children: ReadonlyMap<number, ChildProcess>,
    private readonly admins: Map<number, Redis>,
  ) {}

  /** Seed nodes for the applications' cluster client. */
  get nodes(): { host: string; port: number }[] {
    return [...this.children.keys()].map((port) => ({ host: HOST, port }));
  }

  /** The masters in port order (the order of every per-shard figure). */
  get masters(): readonly BenchMaster[] {
    return this.masterList;
  }

  static async start(masters = 3): Promise<BenchCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'echomq-bench-cluster-'));
    const ports: number[] = [];
    for (let i = 0; i < masters; i++) ports.push(await freePort());
    const children = new Map(ports.map((port) => [port, spawnNode(port, dir)]));
    const admins = new Map<number, Redis>();
    const cluster = new BenchCluster(dir, children, admins);
    try {
      for (const port of ports) admins.set(port, await connectWhenUp(port, children.get(port)!));
      const created = spawnSync(
        'redis-cli',
        [
          '--cluster',
          'create',
          ...ports.map((port) => `${HOST}:${port}`),
          '--cluster-replicas',
          '0',
          '--cluster-yes',
        ],
        { encoding: 'utf8' },
      );
      if (created.status !== 0)
        throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
      // Gossip has no event to await: poll until every node reports the cluster whole.
      await cluster.untilEvery(async (admin) => {
        const info = parseInfo(String(await admin.cluster('INFO')));
        return info.get('cluster_state') === 'ok' && info.get('cluster_known_nodes') === String(masters);
      }, 'cluster_state:ok with every node known');
      cluster.masterList = await cluster.readMasters();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** The plain connection to the master on `port`. */
  admin(port: number): Redis {
    const admin = this.admins.get(port);
    if (!admin) throw new Error(`port ${port} is not a node of the benchmark's cluster`);
    return admin;
  }

  /** The index (in `masters`) of the master serving `key`'s slot, hashtags included. */
  async masterIndexOf(key: string): Promise<number> {
    const slot = Number(await this.admin(this.masterList[0].port).cluster('KEYSLOT', key));
    const index = this.masterList.findIndex((master) =>
      master.ranges.some(([from, to]) => slot >= from && slot <= to),
    );
    if (index < 0) throw new Error(`no master serves slot ${slot}`);
    return index;
  }

  /** The connection to the master serving `key`. */
  async ownerOf(key: string): Promise<Redis> {
    return this.admin(this.masterList[await this.masterIndexOf(key)].port);
  }

  /** Empties every master (run between measurements, when no application is connected). */
  async flushAll(): Promise<void> {
    await Promise.all(this.masterList.map((master) => this.admin(master.port).flushall('SYNC')));
  }

  /** used_cpu_sys + used_cpu_user of each master, seconds, in `masters` order. */
  async cpuSeconds(): Promise<number[]> {
    return Promise.all(
      this.masterList.map(async (master) => {
        const info = parseInfo(await this.admin(master.port).info('cpu'));
        return Number(info.get('used_cpu_sys')) + Number(info.get('used_cpu_user'));
      }),
    );
  }

  async redisVersion(): Promise<string> {
    const info = parseInfo(await this.admin(this.masterList[0].port).info('server'));
    return info.get('redis_version') ?? 'unknown';
  }

  /** Stops every node by its pid and removes the folder. */
  async stop(): Promise<void> {
    for (const admin of this.admins.values()) admin.disconnect();
    await Promise.all(
      [...this.children.values()].map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Synchronous last-resort stop, for process exit handlers. */
  kill(): void {
    for (const child of this.children.values()) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async readMasters(): Promise<BenchMaster[]> {
    const slots = await this.admin(this.nodes[0].port).cluster('SLOTS');
    const byPort = new Map<number, [number, number][]>();
    for (const [from, to, [, port]] of slots) {
      byPort.set(Number(port), [...(byPort.get(Number(port)) ?? []), [from, to]]);
    }
    return [...byPort.entries()].sort(([a], [b]) => a - b).map(([port, ranges]) => ({ port, ranges }));
  }

  private async untilEvery(check: (admin: Redis) => Promise<boolean>, what: string): Promise<void> {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (const [port, admin] of this.admins) {
      for (;;) {
        for (const child of this.children.values()) {
          if (child.exitCode !== null) throw new Error(`a cluster node exited (code ${child.exitCode})`);
        }
        if (await check(admin).catch(() => false)) break;
        if (Date.now() > deadline)
          throw new Error(`cluster node ${port}: ${what} within ${READY_TIMEOUT_MS} ms`);
        await sleep(50);
      }
    }
  }
}

function spawnNode(port: number, dir: string): ChildProcess {
  const child = spawn(
    'redis-server',
    [
      ...['--port', String(port), '--bind', HOST, '--dir', dir],
      ...['--save', '', '--appendonly', 'no'],
      ...['--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`],
    ],
    { stdio: 'ignore' },
  );
  child.once('error', () => undefined);
  return child;
}

/**
 * The admin connection to a node, once the node answers PING. It never reconnects: a node gone
 * mid-benchmark should fail the run at once.
 */
async function connectWhenUp(port: number, child: ChildProcess): Promise<Redis> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server on ${port} exited (code ${child.exitCode})`);
    const admin = new Redis({
      port,
      host: HOST,
      lazyConnect: true,
      retryStrategy: () => null,
      maxRetriesPerRequest: 0,
    });
    admin.on('error', () => undefined);
    try {
      await admin.connect();
      await admin.ping();
      return admin;
    } catch {
      admin.disconnect();
    }
    if (Date.now() > deadline)
      throw new Error(`redis-server on ${port} did not answer within ${READY_TIMEOUT_MS} ms`);
    await sleep(25);
  }
}
