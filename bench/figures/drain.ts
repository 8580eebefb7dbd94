import type { DrainPoint } from '../config';
import { mostProcesses } from '../config';
import type { BenchContext } from '../support/context';
import { inBatches } from '../support/in-flight';
import { measurement, pick, type Measurement } from '../support/measurement';
import { makePayloads } from '../support/payload';
import { interleaved } from '../support/rounds';
import type { WorkerHost } from '../support/worker-pool';
import { drainRate, workerCpuPerJob, WorkerRun, type WorkerRunReport } from '../support/worker-run';
import type { QueueSystem } from '../systems/types';

const WARM_UP_CONCURRENCY = 50;

/**
 * Prefills `jobs` through the bulk path (the bulk figure's batches), then starts the
 * workers (child processes: the pool's long-lived hosts, or the `fresh` ones given)
 * and waits until every job completed. Checks that nothing is left.
 */
export async function drainOnce(
  ctx: BenchContext,
  system: QueueSystem,
  jobs: number,
  point: DrainPoint,
  fresh?: readonly WorkerHost[],
): Promise<WorkerRunReport> {
  const producer = await system.openProducer(ctx.redis.url, { completions: false });
  try {
    await inBatches(makePayloads(jobs), ctx.config.bulk.batch, (batch) => producer.enqueueBulk(batch));
    const run = fresh
      ? await WorkerRun.startOn(ctx, system, fresh, point.concurrency)
      : await WorkerRun.start(ctx, system, point.processes, point.concurrency);
    await run.waitForCompletions(jobs);
    const report = await run.stop();
    const left = await producer.unfinished();
    if (left !== 0 || report.completed !== jobs) {
      throw new Error(
        `${system.label} drain: ${report.completed} of ${jobs} completed, ${left} left in Redis`,
      );
    }
    if (report.started !== jobs)
      ctx.log(`  note: ${system.label} started ${report.started} handlers for ${jobs} jobs`);
    return report;
  } finally {
    await producer.close();
  }
}

export function pointLabel(point: DrainPoint): string {
  return point.processes === 1
    ? `1 worker process, concurrency ${point.concurrency}`
    : `${point.processes} worker processes, concurrency ${point.concurrency} each`;
}

export function pointKey(point: DrainPoint): string {
  return `p${point.processes}.c${point.concurrency}`;
}

export function describeDrain(report: WorkerRunReport): string {
  return `${Math.round(drainRate(report))} jobs/s, worker ${workerCpuPerJob(report).toFixed(1)} µs CPU/job`;
}

/** The rows of one drain point: jobs/s, then the worker processes' Node CPU per job. */
export function drainRows(
  key: string,
  figure: string,
  reports: Readonly<Record<QueueSystem['id'], readonly WorkerRunReport[]>>,
): Measurement[] {
  return [
    measurement(key, figure, 'jobs/s', 'higher', pick(reports, drainRate)),
    measurement(
      `${key}.worker_cpu`,
      `worker Node CPU per job (process.cpuUsage of the worker processes, first handler start to last completion), ${figure}`,
      'µs',
      'lower',
      pick(reports, workerCpuPerJob),
    ),
  ];
}

/**
 * Figure 3: drain prefilled jobs with warm worker processes at each concurrency point
 * (each host drained warm-up jobs first); jobs/s from the first handler start to the
 * last completion, and the workers' Node CPU per job over the same span.
 */
export async function drain(ctx: BenchContext): Promise<Measurement[]> {
  const { jobs, points, warmUpJobs } = ctx.config.drain;
  const warmUp: DrainPoint = { processes: mostProcesses(ctx.config), concurrency: WARM_UP_CONCURRENCY };
  for (const system of ctx.systems) {
    await ctx.admin.flushall('SYNC');
    const report = await drainOnce(ctx, system, warmUpJobs, warmUp);
    ctx.log(`[drain] warm-up ${system.label}: ${describeDrain(report)} (not measured)`);
  }
  const rates: Measurement[] = [];
  const cpu: Measurement[] = [];
  for (const point of points) {
    const key = `drain.${pointKey(point)}`;
    const reports = await interleaved(
      ctx,
      key,
      (system) => drainOnce(ctx, system, jobs, point),
      describeDrain,
    );
    const [rate, perJob] = drainRows(
      key,
      `drain (warm) ${jobs.toLocaleString('en-US')} prefilled jobs, ${pointLabel(point)}`,
      reports,
    );
    rates.push(rate);
    cpu.push(perJob);
  }
  return [...rates, ...cpu];
}
