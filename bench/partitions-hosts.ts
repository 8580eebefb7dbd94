import type { AppSettings, EnqueueReport, FromHost, HostRole, ToHost, WorkerReport } from './partitions-ipc';
import { BOOT_TIMEOUT_MS, ChildHost, forkHost } from './support/child-host';
import { COMPILED } from './support/paths';
import { join } from 'node:path';

const HOST_ENTRY = join(__dirname, COMPILED ? 'partitions-host.js' : 'partitions-host.ts');
const REPLY_TIMEOUT_MS = 60_000;

type Reply<T extends FromHost['type']> = Extract<FromHost, { type: T }>;

/**
 * The orchestrator's handle on one host process (partitions-host.ts), run from the same tsc
 * build (or under ts-node when the orchestrator is): each call sends one message and awaits its
 * reply; a host that reports a failure or exits fails every call waiting on it.
 */
export class BenchHost extends ChildHost<FromHost, ToHost> {
  private constructor(
    readonly role: HostRole,
    child: ReturnType<typeof forkHost>,
  ) {
    super(`${role} host`, child);
  }

  static async spawn(role: HostRole): Promise<BenchHost> {
    const host = new BenchHost(role, forkHost(HOST_ENTRY, [role]));
    await host.reply('booted', BOOT_TIMEOUT_MS);
    return host;
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
    await this.exitWith({ type: 'exit' });
  }

  private async request<T extends FromHost['type']>(
    message: ToHost,
    type: T,
    timeoutMs = REPLY_TIMEOUT_MS,
  ): Promise<Reply<T>> {
    this.check();
    const reply = this.reply(type, timeoutMs);
    this.send(message);
    return reply;
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
