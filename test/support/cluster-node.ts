import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { freePort } from './redis-server';

/** Every node of a test cluster listens on loopback. */
export const CLUSTER_HOST = '127.0.0.1';

/**
 * Settings of the nodes of a cluster with replicas, for failovers that take a couple of seconds:
 * a full sync starts at once (the default waits 5 s for more replicas to join a diskless sync),
 * a replica pings its master every second, and a replica always stands for election however long
 * it was cut off from its master (validity factor 0: the test decides what the replica lacks).
 */
export const REPLICATED_NODE_ARGS: readonly string[] = [
  '--repl-diskless-sync-delay',
  '0',
  '--repl-ping-replica-period',
  '1',
  '--cluster-replica-validity-factor',
  '0',
];

/** A node's cluster bus listens on its port + 10000 (Redis's fixed offset). */
const BUS_PORT_OFFSET = 10_000;

/** Whether nothing listens on `port` on loopback right now. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, CLUSTER_HOST, () => server.close(() => resolve(true)));
  });
}

/**
 * A port for a new cluster node whose bus port (port + 10000) is free too and which clashes with
 * no port or bus port in `taken`: a node whose bus port is in use exits at start, seen only as
 * a node that never answers.
 */
export async function freeClusterPort(taken: readonly number[]): Promise<number> {
  const clashes = (port: number): boolean =>
    taken.some(
      (other) => [other, other + BUS_PORT_OFFSET].includes(port) || other === port + BUS_PORT_OFFSET,
    );
  for (let tries = 0; tries < 100; tries++) {
    const port = await freePort();
    const bus = port + BUS_PORT_OFFSET;
    if (bus <= 65_535 && !clashes(port) && (await portIsFree(bus))) return port;
  }
  throw new Error('no free port whose cluster bus port is free too');
}

/**
 * One redis-server of a test cluster: no persistence, its cluster config file (nodes-<port>.conf)
 * in the cluster's folder, so that a node killed and started again on its port comes back as
 * the same node (its id and epoch from that file) with an empty dataset, and rejoins: a master
 * whose slots a replica took over meanwhile becomes that replica's replica.
 */
export class ClusterNode {
  private child?: ChildProcess;

  constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly args: readonly string[],
  ) {}

  /** The node's output (its log), in the cluster's folder, appended to across restarts. */
  get logFile(): string {
    return join(this.dir, `redis-${this.port}.log`);
  }

  /** The last `lines` lines of its log ('' before it wrote one). */
  logTail(lines = 5): string {
    if (!existsSync(this.logFile)) return '';
    return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** The running process's pid; undefined once it was killed. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the process (again, after kill). Resolves once it was spawned, not once it answers. */
  async start(): Promise<void> {
    if (this.running) throw new Error(`cluster node ${this.port} is already running`);
    const log = openSync(this.logFile, 'a');
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        CLUSTER_HOST,
        '--save',
        '',
        '--appendonly',
        'no',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${this.port}.conf`,
        '--dir',
        this.dir,
        ...this.args,
      ],
      // Its log, and why a node that never answers did not start (its bus port taken, a bad
      // argument: written to stderr before any log is open).
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('error', reject);
      child.once('spawn', () => resolve());
    });
  }

  /** SIGKILLs the process by its pid and waits for its exit (a stopped process dies too). */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  /** SIGSTOP / SIGCONT: a node that stops answering (and acknowledging) without closing a socket. */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void {
    if (this.child?.pid !== undefined && this.running) process.kill(this.child.pid, signal);
  }
}
