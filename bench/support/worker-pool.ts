import { BENCH_QUEUE, type SystemId } from '../systems/types';
import { BOOT_TIMEOUT_MS, ChildHost, forkHost } from './child-host';
import type { FromHost, HostReport, ToHost } from './ipc';
import { WORKER_HOST_ENTRY } from './paths';

const REPLY_TIMEOUT_MS = 60_000;

/**
 * One worker host child process (bench/worker-host.ts), run from the same tsc
 * build as the orchestrator (or under ts-node when the orchestrator is).
 */
export class WorkerHost extends ChildHost<FromHost, ToHost> {
  private constructor(
    readonly system: SystemId,
    child: ReturnType<typeof forkHost>,
  ) {
    super(`${system} worker host`, child);
  }

  static async spawn(system: SystemId): Promise<WorkerHost> {
    const host = new WorkerHost(system, forkHost(WORKER_HOST_ENTRY, [system]));
    await host.reply('booted', BOOT_TIMEOUT_MS);
    return host;
  }

  async start(
    redisUrl: string,
    concurrency: number,
    events: boolean,
    queues: readonly string[] = [BENCH_QUEUE],
  ): Promise<void> {
    this.completed = 0;
    const started = this.reply('started', REPLY_TIMEOUT_MS);
    this.send({ type: 'start', redisUrl, queues, concurrency, events });
    await started;
  }

  async stop(): Promise<HostReport> {
    const stopped = this.reply('stopped', REPLY_TIMEOUT_MS);
    this.send({ type: 'stop' });
    return (await stopped).report;
  }

  async exit(): Promise<void> {
    await this.exitWith({ type: 'exit' });
  }
}

/**
 * The worker hosts of a benchmark: per system, as many processes as the largest
 * figure needs, booted on first use and kept until the end (so process boot and
 * module loading never fall inside a measurement, and are paid once). The cold
 * and idle figures take fresh hosts instead, used for one run and retired.
 */
export class WorkerPool {
  private readonly hosts = new Map<SystemId, WorkerHost[]>();
  private readonly fresh = new Set<WorkerHost>();

  async take(system: SystemId, count: number): Promise<WorkerHost[]> {
    const hosts = this.hosts.get(system) ?? [];
    this.hosts.set(system, hosts);
    const missing = count - hosts.length;
    if (missing > 0) {
      hosts.push(...(await Promise.all(Array.from({ length: missing }, () => WorkerHost.spawn(system)))));
    }
    return hosts.slice(0, count);
  }

  /** Boots `count` new hosts of a system that have run nothing yet (not kept: retire them after use). */
  async spawnFresh(system: SystemId, count: number): Promise<WorkerHost[]> {
    return Promise.all(
      Array.from({ length: count }, async () => {
        const host = await WorkerHost.spawn(system);
        this.fresh.add(host);
        return host;
      }),
    );
  }

  /** Ends fresh hosts after their run. */
  async retire(hosts: readonly WorkerHost[]): Promise<void> {
    for (const host of hosts) this.fresh.delete(host);
    await Promise.all(hosts.map((host) => host.exit().catch(() => host.kill())));
  }

  async closeAll(): Promise<void> {
    const all = [...[...this.hosts.values()].flat(), ...this.fresh];
    this.hosts.clear();
    this.fresh.clear();
    await Promise.all(all.map((host) => host.exit().catch(() => host.kill())));
  }

  killAll(): void {
    for (const host of [...[...this.hosts.values()].flat(), ...this.fresh]) host.kill();
  }
}
