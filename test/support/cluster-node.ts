import { spawn, type ChildProcess } from 'node:child_process';

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
      { stdio: 'ignore' },
    );
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
