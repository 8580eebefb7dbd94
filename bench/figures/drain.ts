import type { DrainPoint } from '../config';
import { mostProcesses } from '../config';
import type { BenchContext } from '../support/context';
import { inBatches } from '../support/in-flight';
import { measurement, type Measurement } from '../support/measurement';
import { makePayloads } from '../support/payload';
import { interleaved } from '../support/rounds';
import { drainRate, WorkerRun, type WorkerRunReport } from '../support/worker-run';
import type { QueueSystem } from '../systems/types';

/** Prefill in the largest batches every system takes in one call (EchoMQ's ENQUEUE_MANY_MAX). */
const PREFILL_BATCH = 500;
const WARM_UP_CONCURRENCY = 50;

/**
 * Prefills `jobs` through the bulk path, then starts the workers (child
 * processes) and waits until every job completed. Checks that nothing is left.
 */
export async function drainOnce(
  ctx: BenchContext,
  system: QueueSystem,
  jobs: number,
  point: DrainPoint,
): Promise<WorkerRunReport> {
  const producer = await system.openProducer(ctx.redis.url, { completions: false });
  try {
    await inBatches(makePayloads(jobs), PREFILL_BATCH, (batch) => producer.enqueueBulk(batch));
    const run = await WorkerRun.start(ctx, system, point.processes, point.concurrency);
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

function pointLabel(point: DrainPoint): string {
  return point.processes === 1
    ? `1 worker process, concurrency ${point.concurrency}`
    : `${point.processes} worker processes, concurrency ${point.concurrency} each`;
}

/**
 * Figure 3: drain prefilled jobs with worker processes at each concurrency point;
 * jobs/s from the first handler start to the last completion.
 */
export async function drain(ctx: BenchContext): Promise<Measurement[]> {
  const { jobs, points, warmUpJobs } = ctx.config.drain;
  const warmUp: DrainPoint = { processes: mostProcesses(ctx.config), concurrency: WARM_UP_CONCURRENCY };
  for (const system of ctx.systems) {
    await ctx.admin.flushall('SYNC');
    const report = await drainOnce(ctx, system, warmUpJobs, warmUp);
    ctx.log(`[drain] warm-up ${system.label}: ${Math.round(drainRate(report))} jobs/s (not measured)`);
  }
  const measurements: Measurement[] = [];
  for (const point of points) {
    const key = `drain.p${point.processes}.c${point.concurrency}`;
    const rates = await interleaved(
      ctx,
      key,
      async (system) => drainRate(await drainOnce(ctx, system, jobs, point)),
      (rate) => `${Math.round(rate)} jobs/s`,
    );
    measurements.push(
      measurement(
        key,
        `drain ${jobs.toLocaleString('en-US')} prefilled jobs, ${pointLabel(point)}`,
        'jobs/s',
        'higher',
        rates,
      ),
    );
  }
  return measurements;
}
