import { anchorClock, sleep, wallNow } from '../support/clock';
import type { BenchContext } from '../support/context';
import { measurement, pick, type Measurement } from '../support/measurement';
import { makePayload } from '../support/payload';
import { interleaved } from '../support/rounds';
import { percentile } from '../support/stats';
import { WorkerRun } from '../support/worker-run';
import type { QueueSystem } from '../systems/types';

/** Lets the idle worker settle into its blocking wait before the first job. */
const IDLE_BEFORE_MS = 250;
const PERCENTILES = [50, 95, 99] as const;

interface LatencyRun {
  readonly startMs: readonly number[];
  readonly completionMs: readonly number[];
  /** The rate the pacer achieved, jobs/s. */
  readonly achievedRate: number;
}

/**
 * Sends `total` jobs at a fixed rate, open loop (a slow reply never delays the
 * next send); each job carries its enqueue time. Resolves with the
 * enqueue -> completion-seen-by-producer latencies of the non-warm-up jobs.
 */
async function paced(
  enqueueAndAwait: (i: number, t: number, warmUp: boolean) => Promise<void>,
  total: number,
  warmUpJobs: number,
  ratePerSecond: number,
): Promise<{ completionMs: number[]; achievedRate: number }> {
  const interval = 1000 / ratePerSecond;
  const completionMs: number[] = [];
  const errors: Error[] = [];
  const pending: Promise<void>[] = [];
  const firstAt = wallNow();
  for (let i = 0; i < total; i++) {
    const due = firstAt + i * interval;
    const wait = due - wallNow();
    if (wait >= 1) await sleep(wait);
    const t = wallNow();
    const warmUp = i < warmUpJobs;
    pending.push(
      enqueueAndAwait(i, t, warmUp).then(
        () => {
          if (!warmUp) completionMs.push(wallNow() - t);
        },
        (error: Error) => void errors.push(error),
      ),
    );
  }
  const achievedRate = (total - 1) / ((wallNow() - firstAt) / 1000);
  await Promise.all(pending);
  if (errors.length > 0)
    throw new Error(`${errors.length} of ${total} paced jobs failed; first: ${errors[0].message}`);
  return { completionMs, achievedRate };
}

async function latencyRun(ctx: BenchContext, system: QueueSystem): Promise<LatencyRun> {
  const { jobs, warmUpJobs, ratePerSecond, concurrency } = ctx.config.latency;
  const producer = await system.openProducer(ctx.redis.url, { completions: true });
  try {
    const run = await WorkerRun.start(ctx, system, 1, concurrency, true);
    anchorClock();
    await sleep(IDLE_BEFORE_MS);
    const { completionMs, achievedRate } = await paced(
      (i, t, warmUp) => producer.enqueueAndAwait(makePayload(i, t, warmUp)),
      warmUpJobs + jobs,
      warmUpJobs,
      ratePerSecond,
    );
    await run.waitForCompletions(warmUpJobs + jobs);
    const report = await run.stop();
    if (report.startLatenciesMs.length !== jobs || completionMs.length !== jobs) {
      throw new Error(
        `${system.label} latency: ${report.startLatenciesMs.length} / ${completionMs.length} of ${jobs} samples`,
      );
    }
    return { startMs: report.startLatenciesMs, completionMs, achievedRate };
  } finally {
    await producer.close();
  }
}

/**
 * Figure 4: jobs paced at a fixed rate into an idle worker; enqueue -> handler
 * start (measured in the worker process) and enqueue -> completion seen by the
 * producer, p50 / p95 / p99 per round.
 */
export async function latency(ctx: BenchContext): Promise<Measurement[]> {
  const { jobs, ratePerSecond, concurrency } = ctx.config.latency;
  const results = await interleaved(
    ctx,
    'latency',
    (system) => latencyRun(ctx, system),
    (run) =>
      `start p50 ${percentile(run.startMs, 50).toFixed(2)} ms, completion p50 ${percentile(run.completionMs, 50).toFixed(2)} ms ` +
      `(paced at ${Math.round(run.achievedRate)} jobs/s)`,
  );
  const setup = `${ratePerSecond} jobs/s paced, ${jobs.toLocaleString('en-US')} jobs, 1 idle worker process, concurrency ${concurrency}`;
  return [
    ...PERCENTILES.map((p) =>
      measurement(
        `latency.start.p${p}`,
        `latency enqueue -> handler start, p${p} (${setup})`,
        'ms',
        'lower',
        pick(results, (run) => percentile(run.startMs, p)),
      ),
    ),
    ...PERCENTILES.map((p) =>
      measurement(
        `latency.completion.p${p}`,
        `latency enqueue -> completion seen by the producer, p${p} (${setup})`,
        'ms',
        'lower',
        pick(results, (run) => percentile(run.completionMs, p)),
      ),
    ),
  ];
}
