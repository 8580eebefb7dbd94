import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { AppSettings, EnqueueReport, FromHost, HostRole, ToHost, WorkerReport } from './partitions-ipc';
import { COMPILED, REPO_ROOT, WORKER_HOST_EXEC_ARGV } from './support/paths';

const HOST_ENTRY = join(__dirname, COMPILED ? 'partitions-host.js' : 'partitions-host.ts');
const BOOT_TIMEOUT_MS = 120_000;
const REPLY_TIMEOUT_MS = 60_000;

type Reply<T extends FromHost['type']> = Extract<FromHost, { type: T }>;

/**
 * The orchestrator's handle on one host process (partitions-host.ts), run from the same tsc
 * build (or under ts-node when the orchestrator is): each call sends one message and awaits its
 * reply; a host that reports a failure or exits fails every call waiting on it.
 */
export class BenchHost {
  /** Completions the host's worker application reported (every PROGRESS_EVERY_MS). */
  completed = 0;
  private failure?: Error;
  private readonly waiters = new Set<(message: FromHost) => void>();

  private constructor(
    readonly role: HostRole,
    private readonly child: ChildProcess,
  ) {
    child.on('message', (message: FromHost) => {
      if (message.type === 'progress') this.completed = message.completed;
      if (message.type === 'failed') this.failure = new Error(`${role} host: ${message.message}`);
      for (const waiter of [...this.waiters]) waiter(message);
    });
    child.on('exit', (code, signal) => {
      this.failure ??= new Error(`${role} host exited (code ${code}, signal ${signal})`);
      for (const waiter of [...this.waiters]) waiter({ type: 'failed', message: this.failure.message });
    });
  }

  static async spawn(role: HostRole): Promise<BenchHost> {
    const child = fork(HOST_ENTRY, [role], {
      cwd: REPO_ROOT,
      execArgv: [...WORKER_HOST_EXEC_ARGV],
      env: { ...process.env, TS_NODE_PROJECT: join(REPO_ROOT, 'tsconfig.json') },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const host = new BenchHost(role, child);
    await host.reply('booted', BOOT_TIMEOUT_MS);
    return host;
  }

  /** Throws if the host reported a failure. */
  check(): void {
    if (this.failure) throw this.failure;
  }

  async open(settings: AppSettings): Promise<void> {
    this.completed = 0;
    await this.request({ type: 'open', settings }, 'opened');
  }

  /** Enqueues jobs from..from+count-1; resolves when the last enqueue resolved. */
  async enqueue(from: number, count: number, inFlight: number, timeoutMs: number): Promise<EnqueueReport> {
    return (await this.request({ type: 'enqueue', from, count, inFlight }, 'enqueued', timeoutMs)).report;
  }

  /** A worker opened without claimAtBoot starts claiming. */
  async start(): Promise<void> {
    await this.request({ type: 'start' }, 'started');
  }

  async cpuSeconds(): Promise<number> {
    return (await this.request({ type: 'cpu' }, 'cpu')).seconds;
  }

  /** Closes the application; a worker returns what its handlers did. */
  async close(): Promise<WorkerReport | null> {
    return (await this.request({ type: 'close' }, 'closed')).report;
  }

  async exit(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    this.child.send({ type: 'exit' } satisfies ToHost);
    await exited;
    clearTimeout(timer);
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private async request<T extends FromHost['type']>(
    message: ToHost,
    type: T,
    timeoutMs = REPLY_TIMEOUT_MS,
  ): Promise<Reply<T>> {
    this.check();
    const reply = this.reply(type, timeoutMs);
    this.child.send(message);
    return reply;
  }

  private reply<T extends FromHost['type']>(type: T, timeoutMs: number): Promise<Reply<T>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`${this.role} host sent no '${type}' within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (message: FromHost): void => {
        if (message.type !== type && message.type !== 'failed') return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        if (message.type === 'failed') reject(this.failure ?? new Error(message.message));
        else resolve(message as Reply<T>);
      };
      this.waiters.add(waiter);
    });
  }
}

/** The benchmark's producer and worker hosts, booted once before the first run. */
export class BenchHosts {
  private constructor(
    readonly producers: readonly BenchHost[],
    readonly workers: readonly BenchHost[],
  ) {}

  static async boot(producers: number, workers: number): Promise<BenchHosts> {
    const spawn = (role: HostRole, count: number): Promise<BenchHost[]> =>
      Promise.all(Array.from({ length: count }, () => BenchHost.spawn(role)));
    const [producerHosts, workerHosts] = await Promise.all([
      spawn('producer', producers),
      spawn('worker', workers),
    ]);
    return new BenchHosts(producerHosts, workerHosts);
  }

  get all(): BenchHost[] {
    return [...this.producers, ...this.workers];
  }

  /** Completions of every worker host's open application. */
  get completed(): number {
    return this.workers.reduce((sum, host) => sum + host.completed, 0);
  }

  async exitAll(): Promise<void> {
    await Promise.all(this.all.map((host) => host.exit().catch(() => host.kill())));
  }

  killAll(): void {
    for (const host of this.all) host.kill();
  }
}
