import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { SystemId } from '../systems/types';
import type { FromHost, HostReport, ToHost } from './ipc';
import { REPO_ROOT, WORKER_HOST_ENTRY, WORKER_HOST_EXEC_ARGV } from './paths';
const BOOT_TIMEOUT_MS = 120_000;
const REPLY_TIMEOUT_MS = 60_000;

/**
 * One worker host child process (bench/worker-host.ts), run from the same tsc
 * build as the orchestrator (or under ts-node when the orchestrator is).
 */
export class WorkerHost {
  /** Completions reported by the running worker (updated every PROGRESS_EVERY_MS). */
  completed = 0;
  private failure?: Error;
  private readonly waiters = new Set<(message: FromHost) => void>();

  private constructor(
    readonly system: SystemId,
    private readonly child: ChildProcess,
  ) {
    child.on('message', (message: FromHost) => {
      if (message.type === 'progress') this.completed = message.completed;
      if (message.type === 'failed') this.failure = new Error(`${system} worker host: ${message.message}`);
      for (const waiter of [...this.waiters]) waiter(message);
    });
    child.on('exit', (code, signal) => {
      this.failure ??= new Error(`${system} worker host exited (code ${code}, signal ${signal})`);
      for (const waiter of [...this.waiters]) waiter({ type: 'failed', message: this.failure.message });
    });
  }

  static async spawn(system: SystemId): Promise<WorkerHost> {
    const child = fork(WORKER_HOST_ENTRY, [system], {
      cwd: REPO_ROOT,
      execArgv: [...WORKER_HOST_EXEC_ARGV],
      env: { ...process.env, TS_NODE_PROJECT: join(REPO_ROOT, 'tsconfig.json') },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const host = new WorkerHost(system, child);
    await host.reply('booted', BOOT_TIMEOUT_MS);
    return host;
  }

  /** Throws if the host has reported a failure since the run began. */
  check(): void {
    if (this.failure) throw this.failure;
  }

  async start(redisUrl: string, concurrency: number, events: boolean): Promise<void> {
    this.completed = 0;
    const started = this.reply('started', REPLY_TIMEOUT_MS);
    this.send({ type: 'start', redisUrl, concurrency, events });
    await started;
  }

  async stop(): Promise<HostReport> {
    const stopped = this.reply('stopped', REPLY_TIMEOUT_MS);
    this.send({ type: 'stop' });
    const message = await stopped;
    if (message.type !== 'stopped') throw new Error('unreachable');
    return message.report;
  }

  async exit(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    this.send({ type: 'exit' });
    await exited;
    clearTimeout(timer);
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private send(message: ToHost): void {
    this.check();
    this.child.send(message);
  }

  private reply(type: FromHost['type'], timeoutMs: number): Promise<FromHost> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`${this.system} worker host sent no '${type}' within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (message: FromHost): void => {
        if (message.type !== type && message.type !== 'failed') return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        if (message.type === 'failed') reject(this.failure ?? new Error(message.message));
        else resolve(message);
      };
      this.waiters.add(waiter);
    });
  }
}

/**
 * The worker hosts of a benchmark: per system, as many processes as the largest
 * figure needs, booted on first use and kept until the end (so process boot and
 * module loading never fall inside a measurement, and are paid once).
 */
export class WorkerPool {
  private readonly hosts = new Map<SystemId, WorkerHost[]>();

  async take(system: SystemId, count: number): Promise<WorkerHost[]> {
    const hosts = this.hosts.get(system) ?? [];
    this.hosts.set(system, hosts);
    const missing = count - hosts.length;
    if (missing > 0) {
      hosts.push(...(await Promise.all(Array.from({ length: missing }, () => WorkerHost.spawn(system)))));
    }
    return hosts.slice(0, count);
  }

  async closeAll(): Promise<void> {
    const all = [...this.hosts.values()].flat();
    this.hosts.clear();
    await Promise.all(all.map((host) => host.exit().catch(() => host.kill())));
  }

  killAll(): void {
    for (const host of [...this.hosts.values()].flat()) host.kill();
  }
}
