import type { BenchContext } from '../support/context';
import { runInFlight } from '../support/in-flight';
import { measurement, pick, type Measurement } from '../support/measurement';
import { makePayloads } from '../support/payload';
import { snapshot } from '../support/redis-info';
import { interleaved } from '../support/rounds';
import { WorkerRun } from '../support/worker-run';
import type { QueueSystem } from '../systems/types';

interface CostRun {
  /** used_memory delta per waiting job, bytes. */
  readonly memoryPerJob: number;
  /** Redis CPU (sys + user) per job across the drain, µs. */
  readonly cpuPerJob: number;
  /** Commands per job across enqueue + drain (commandstats calls, which include commands run inside scripts). */
  readonly commandsPerJob: number;
}

/**
 * Enqueues N jobs one per call (nothing consumes them yet), reads used_memory;
 * then drains them with one worker process and reads CPU and command counters.
 * The scripts of every system are already in Redis's script cache from the
 * earlier figures (FLUSHALL keeps it), so loading them is not counted.
 */
async function costRun(ctx: BenchContext, system: QueueSystem): Promise<CostRun> {
  const { jobs, inFlight, concurrency } = ctx.config.cost;
  const producer = await system.openProducer(ctx.redis.url, { completions: false });
  try {
    const payloads = makePayloads(jobs);
    const before = await snapshot(ctx.admin);
    await runInFlight(jobs, inFlight, (i) => producer.enqueue(payloads[i]));
    const filled = await snapshot(ctx.admin);
    const run = await WorkerRun.start(ctx, system, 1, concurrency);
    await run.waitForCompletions(jobs);
    const drained = await snapshot(ctx.admin);
    const report = await run.stop();
    const left = await producer.unfinished();
    if (left !== 0 || report.completed !== jobs) {
      throw new Error(`${system.label} cost run: ${report.completed} of ${jobs} completed, ${left} left`);
    }
    return {
      memoryPerJob: (filled.usedMemory - before.usedMemory) / jobs,
      cpuPerJob: ((drained.cpuSeconds - filled.cpuSeconds) * 1e6) / jobs,
      commandsPerJob: (drained.commandCalls - before.commandCalls) / jobs,
    };
  } finally {
    await producer.close();
  }
}

/** Figure 5: what one job costs Redis: memory while waiting, CPU to process, commands end to end. */
export async function redisCost(ctx: BenchContext): Promise<Measurement[]> {
  const { jobs, inFlight, concurrency } = ctx.config.cost;
  const results = await interleaved(
    ctx,
    'redis-cost',
    (system) => costRun(ctx, system),
    (run) =>
      `${Math.round(run.memoryPerJob)} B/job waiting, ${run.cpuPerJob.toFixed(1)} µs CPU/job, ${run.commandsPerJob.toFixed(1)} commands/job`,
  );
  const n = jobs.toLocaleString('en-US');
  return [
    measurement(
      'redis.memory_per_waiting_job',
      `Redis memory per waiting job (used_memory delta after ${n} jobs enqueued 1 per call, ${inFlight} in flight)`,
      'bytes',
      'lower',
      pick(results, (run) => run.memoryPerJob),
    ),
    measurement(
      'redis.cpu_per_job',
      `Redis CPU per processed job (used_cpu_sys + used_cpu_user delta across a drain of ${n} jobs, 1 worker process, concurrency ${concurrency})`,
      'µs',
      'lower',
      pick(results, (run) => run.cpuPerJob),
    ),
    measurement(
      'redis.commands_per_job',
      `Redis commands per job, enqueue + drain (commandstats calls delta, commands inside Lua scripts included, INFO excluded)`,
      'commands',
      'lower',
      pick(results, (run) => run.commandsPerJob),
    ),
  ];
}
