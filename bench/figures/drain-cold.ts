import type { DrainPoint } from '../config';
import { formatDuration } from '../support/clock';
import type { BenchContext } from '../support/context';
import { measurement, pick, type Measurement } from '../support/measurement';
import { interleaved } from '../support/rounds';
import type { WorkerHost } from '../support/worker-pool';
import type { WorkerRunReport } from '../support/worker-run';
import type { SystemId } from '../systems/types';
import { describeDrain, drainOnce, drainRows, pointKey, pointLabel } from './drain';

/**
 * Boots the fresh worker hosts one round of a cold point needs, every system's at
 * once, and hands them out by system. Hosts that boot and wait run nothing: a
 * booted host has loaded its library and nothing else.
 */
class FreshHosts {
  private stock = new Map<SystemId, WorkerHost[]>();

  constructor(
    private readonly ctx: BenchContext,
    private readonly point: DrainPoint,
  ) {}

  async boot(): Promise<void> {
    await this.retireAll();
    const startedAt = Date.now();
    const booted = await Promise.all(
      this.ctx.systems.map(
        async (system) =>
          [system.id, await this.ctx.pool.spawnFresh(system.id, this.point.processes)] as const,
      ),
    );
    this.stock = new Map(booted);
    const hosts = booted.reduce((sum, [, fresh]) => sum + fresh.length, 0);
    this.ctx.log(`[cold] ${hosts} fresh worker hosts booted in ${formatDuration(Date.now() - startedAt)}`);
  }

  take(system: SystemId): WorkerHost[] {
    const hosts = this.stock.get(system);
    if (!hosts) throw new Error(`no fresh ${system} worker host booted for this round`);
    this.stock.delete(system);
    return hosts;
  }

  async retire(hosts: readonly WorkerHost[]): Promise<void> {
    await this.ctx.pool.retire(hosts);
  }

  async retireAll(): Promise<void> {
    const left = [...this.stock.values()].flat();
    this.stock.clear();
    await this.ctx.pool.retire(left);
  }
}

/**
 * Figure 3b: the cold drains. Each run gets freshly forked worker hosts that have drained
 * nothing (no JIT warm-up) and times their first `cold.jobs` jobs, prefilled, as the warm
 * drain figure does: jobs/s from the first handler start to the last completion, and the
 * workers' Node CPU per job over the same span. The worker's start-up (from the start
 * message to its first handler start) is reported once, at the first single-process point.
 */
export async function drainCold(ctx: BenchContext): Promise<Measurement[]> {
  const { jobs, points } = ctx.config.cold;
  const rates: Measurement[] = [];
  const cpu: Measurement[] = [];
  const startup: Measurement[] = [];
  for (const point of points) {
    const key = `drain.cold.${pointKey(point)}`;
    const fresh = new FreshHosts(ctx, point);
    let reports: Record<SystemId, WorkerRunReport[]>;
    try {
      reports = await interleaved(
        ctx,
        key,
        async (system) => {
          const hosts = fresh.take(system.id);
          try {
            return await drainOnce(ctx, system, jobs, point, hosts);
          } finally {
            await fresh.retire(hosts);
          }
        },
        describeDrain,
        () => fresh.boot(),
      );
    } finally {
      await fresh.retireAll();
    }
    const n = jobs.toLocaleString('en-US');
    const [rate, perJob] = drainRows(
      key,
      `drain (cold) ${n} prefilled jobs, the first ${n} of fresh worker processes, ${pointLabel(point)}`,
      reports,
    );
    rates.push(rate);
    cpu.push(perJob);
    if (point.processes === 1 && startup.length === 0) {
      startup.push(
        measurement(
          `drain.cold.${pointKey(point)}.worker_startup_cpu`,
          `worker start-up Node CPU of a fresh worker process (start message to first handler start: worker creation, connections, first claim), ${pointLabel(point)}`,
          'ms',
          'lower',
          pick(reports, (report) => report.startupCpuMicros / 1000),
        ),
      );
    }
  }
  return [...rates, ...cpu, ...startup];
}
