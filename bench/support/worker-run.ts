import type { QueueSystem } from '../systems/types';
import { waitUntil } from './clock';
import type { BenchContext } from './context';
import type { HostReport } from './ipc';
import type { WorkerHost } from './worker-pool';

/** The hosts' reports of one run, merged: the window spans all processes. */
export interface WorkerRunReport {
  readonly started: number;
  readonly completed: number;
  /** Earliest handler start in any process (wallNow ms). */
  readonly firstStartAt: number;
  /** Latest completion in any process (wallNow ms). */
  readonly lastCompletedAt: number;
  readonly startLatenciesMs: readonly number[];
  /** Node CPU of all the worker processes over their drains, µs (see HostReport.cpuMicros). */
  readonly cpuMicros: number;
  /** Node CPU of all the worker processes from `start` to their first handler start, µs. */
  readonly startupCpuMicros: number;
}

function sumOf(values: readonly (number | null)[]): number {
  return values.reduce<number>((sum, value) => sum + (value ?? 0), 0);
}

function merge(reports: readonly HostReport[]): WorkerRunReport {
  const starts = reports.flatMap((report) => (report.firstStartAt === null ? [] : [report.firstStartAt]));
  const ends = reports.flatMap((report) => (report.lastCompletedAt === null ? [] : [report.lastCompletedAt]));
  return {
    started: reports.reduce((sum, report) => sum + report.started, 0),
    completed: reports.reduce((sum, report) => sum + report.completed, 0),
    firstStartAt: Math.min(...starts),
    lastCompletedAt: Math.max(...ends),
    startLatenciesMs: reports.flatMap((report) => report.startLatenciesMs),
    cpuMicros: sumOf(reports.map((report) => report.cpuMicros)),
    startupCpuMicros: sumOf(reports.map((report) => report.startupCpuMicros)),
  };
}

/**
 * Workers of one system running in `processes` worker hosts (child processes)
 * for one run: started together, watched through the hosts' progress messages,
 * stopped together.
 */
export class WorkerRun {
  private constructor(
    private readonly ctx: BenchContext,
    private readonly system: QueueSystem,
    private readonly hosts: readonly WorkerHost[],
  ) {}

  /** On the pool's long-lived hosts of the system. */
  static async start(
    ctx: BenchContext,
    system: QueueSystem,
    processes: number,
    concurrency: number,
    events = false,
  ): Promise<WorkerRun> {
    return WorkerRun.startOn(ctx, system, await ctx.pool.take(system.id, processes), concurrency, events);
  }

  /** On the given hosts (fresh ones, for the cold figures). */
  static async startOn(
    ctx: BenchContext,
    system: QueueSystem,
    hosts: readonly WorkerHost[],
    concurrency: number,
    events = false,
  ): Promise<WorkerRun> {
    await Promise.all(hosts.map((host) => host.start(ctx.redis.url, concurrency, events)));
    return new WorkerRun(ctx, system, hosts);
  }

  get completed(): number {
    return this.hosts.reduce((sum, host) => sum + host.completed, 0);
  }

  async waitForCompletions(total: number): Promise<void> {
    await waitUntil(
      () => {
        for (const host of this.hosts) host.check();
        return this.completed >= total;
      },
      this.ctx.config.runTimeoutMs,
      `${total} completions by ${this.system.label} (have ${this.completed})`,
    );
  }

  async stop(): Promise<WorkerRunReport> {
    return merge(await Promise.all(this.hosts.map((host) => host.stop())));
  }
}

/** jobs/s between the first handler start and the last completion. */
export function drainRate(report: WorkerRunReport): number {
  return report.completed / ((report.lastCompletedAt - report.firstStartAt) / 1000);
}

/** The worker processes' Node CPU per completed job over the drain, µs. */
export function workerCpuPerJob(report: WorkerRunReport): number {
  return report.cpuMicros / report.completed;
}
