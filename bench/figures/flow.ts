import type { EnqueueOptions } from '@app/echomq/internal';
import { ENQUEUE_MANY_MAX } from '@app/echomq/scripts/limits';
import type { DrainPoint } from '../config';
import { ClaimCallCounter, type ClaimCalls } from '../support/claim-calls';
import type { BenchContext } from '../support/context';
import { EchoMqFlowProducer } from '../support/echomq-flow-producer';
import { inBatches } from '../support/in-flight';
import type { SoloMeasurement } from '../support/measurement';
import { makePayload } from '../support/payload';
import { drainRate, WorkerRun, type WorkerRunReport } from '../support/worker-run';
import type { QueueSystem } from '../systems/types';

/** The largest batch one enqueueMany takes (this producer calls enqueueMany itself). */
const PREFILL_BATCH = ENQUEUE_MANY_MAX;

/** Where job i waits: its lane and priority (absent: the default lane, priority 0). */
type Placement = (i: number) => Pick<EnqueueOptions, 'lane' | 'priority'>;

/** What the method section says about these figures (appended to the run's method). */
export const FLOW_METHOD: readonly string[] = [
  'Flow control (EchoMQ only; the other systems have no lanes or shared limits to compare): each round drains the same number of prefilled jobs three ways, one after another on a flushed Redis with the same worker hosts and settings as the drain figure: plain (one lane, priority 0), spread round-robin over many lanes (enqueue option `lane`), and with priority = i % 10 (enqueue option `priority`). The ratios are per round, over the plain drain of the same round.',
  'Rate limit: rateLimit { max, windowMs } is stored in Redis with QueueService.setLimits after the prefill, so every worker enforces it together. Starts/s = jobs / (last handler start - first handler start + windowMs): a limiter that admits max per window at the start of each window scores exactly max per window. The most starts in any windowMs span are counted over the handler start timestamps (taken in the worker processes, so a few ms of scheduling jitter can move a start across a window edge). Claim calls are counted by Redis itself: the slow log, its threshold at 0 for these runs only, records each EVALSHA of the claim script and the `claimed` counter bump of each claim that claimed jobs; calls per window per worker = calls / (the span above / windowMs) / worker processes, including the calls at the start and after the last job.',
];

interface RateRun {
  readonly report: WorkerRunReport;
  /** Handler start times, ms, relative to one reference (only their differences mean anything). */
  readonly starts: readonly number[];
  readonly claims: ClaimCalls;
}

function pointLabel(point: DrainPoint): string {
  return point.processes === 1
    ? `1 worker process, concurrency ${point.concurrency}`
    : `${point.processes} worker processes, concurrency ${point.concurrency} each`;
}

/**
 * Prefills `jobs` placed by `place` through enqueueMany, runs `beforeWorkers`, then drains
 * them with EchoMQ's worker hosts as the drain figure does, and checks nothing is left.
 * Every job carries the same enqueue timestamp, so the hosts' start latencies are the
 * handlers' start times against one reference.
 */
async function flowDrain(
  ctx: BenchContext,
  system: QueueSystem,
  jobs: number,
  point: DrainPoint,
  place: Placement,
  beforeWorkers?: (producer: EchoMqFlowProducer) => Promise<void>,
): Promise<WorkerRunReport> {
  const producer = await EchoMqFlowProducer.open(ctx.redis.url);
  try {
    const reference = Date.now();
    const batch = Array.from({ length: jobs }, (_, i) => ({ data: makePayload(i, reference), ...place(i) }));
    await inBatches(batch, PREFILL_BATCH, (slice) => producer.enqueueMany(slice));
    await beforeWorkers?.(producer);
    const run = await WorkerRun.start(ctx, system, point.processes, point.concurrency);
    await run.waitForCompletions(jobs);
    const report = await run.stop();
    const left = await producer.unfinished();
    if (left !== 0 || report.completed !== jobs) {
      throw new Error(`EchoMQ flow drain: ${report.completed} of ${jobs} completed, ${left} left in Redis`);
    }
    return report;
  } finally {
    await producer.close();
  }
}

/** jobs / (span of the starts + one window): what a limiter admitting `max` per window scores as max. */
function startsPerSecond(starts: readonly number[], windowMs: number): number {
  return starts.length / (startSpanMs(starts, windowMs) / 1000);
}

function startSpanMs(starts: readonly number[], windowMs: number): number {
  return Math.max(...starts) - Math.min(...starts) + windowMs;
}

/** The most starts inside any half-open span [t, t + windowMs). */
function peakInWindow(starts: readonly number[], windowMs: number): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let peak = 0;
  for (let from = 0, to = 0; from < sorted.length; from++) {
    while (to < sorted.length && sorted[to] < sorted[from] + windowMs) to++;
    peak = Math.max(peak, to - from);
  }
  return peak;
}

async function rateRun(ctx: BenchContext, system: QueueSystem, counter: ClaimCallCounter): Promise<RateRun> {
  const { jobs, max, windowMs, point } = ctx.config.flow.rate;
  const report = await flowDrain(
    ctx,
    system,
    jobs,
    point,
    () => ({}),
    async (producer) => {
      await producer.setRateLimit({ max, windowMs });
      const stored = await producer.rateLimit();
      if (stored?.max !== max || stored.windowMs !== windowMs) {
        throw new Error(`the rate limit did not land in Redis: ${JSON.stringify(stored)}`);
      }
      await counter.reset();
    },
  );
  const claims = await counter.read();
  if (claims.claimed !== jobs) ctx.log(`  note: the claim calls claimed ${claims.claimed} jobs for ${jobs}`);
  return { report, starts: report.startLatenciesMs, claims };
}

async function drains(ctx: BenchContext, system: QueueSystem): Promise<SoloMeasurement[]> {
  const { jobs, lanes, point } = ctx.config.flow;
  const variants: readonly { readonly name: string; readonly place: Placement }[] = [
    { name: 'plain', place: () => ({}) },
    { name: `${lanes} lanes`, place: (i) => ({ lane: `lane-${i % lanes}` }) },
    { name: 'priorities', place: (i) => ({ priority: i % 10 }) },
  ];
  const rates = variants.map(() => [] as number[]);
  for (let round = 0; round < ctx.config.rounds; round++) {
    for (const [index, variant] of variants.entries()) {
      await ctx.admin.flushall('SYNC');
      const rate = drainRate(await flowDrain(ctx, system, jobs, point, variant.place));
      rates[index].push(rate);
      ctx.log(`[flow] round ${round + 1}/${ctx.config.rounds} ${variant.name}: ${Math.round(rate)} jobs/s`);
    }
  }
  const [plain, laned, prioritised] = rates;
  const over = (values: readonly number[]): number[] => values.map((value, round) => value / plain[round]);
  const n = jobs.toLocaleString('en-US');
  const at = pointLabel(point);
  const spread = lanes.toLocaleString('en-US');
  return [
    {
      key: 'flow.drain.plain',
      figure: `drain ${n} prefilled jobs, one lane, priority 0 (the baseline below), ${at}`,
      unit: 'jobs/s',
      better: 'higher',
      values: plain,
    },
    {
      key: 'flow.drain.lanes',
      figure: `drain ${n} prefilled jobs spread round-robin over ${spread} lanes, ${at}`,
      unit: 'jobs/s',
      better: 'higher',
      values: laned,
    },
    {
      key: 'flow.drain.lanes.ratio',
      figure: `${spread} lanes / one lane, per round`,
      unit: 'ratio',
      better: 'higher',
      values: over(laned),
    },
    {
      key: 'flow.drain.priorities',
      figure: `drain ${n} prefilled jobs with priority = i % 10, ${at}`,
      unit: 'jobs/s',
      better: 'higher',
      values: prioritised,
    },
    {
      key: 'flow.drain.priorities.ratio',
      figure: 'mixed priorities / one priority, per round',
      unit: 'ratio',
      better: 'higher',
      values: over(prioritised),
    },
  ];
}

async function rateLimited(ctx: BenchContext, system: QueueSystem): Promise<SoloMeasurement[]> {
  const { jobs, max, windowMs, point } = ctx.config.flow.rate;
  const counter = await ClaimCallCounter.install(ctx.admin);
  const runs: RateRun[] = [];
  try {
    for (let round = 0; round < ctx.config.rounds; round++) {
      await ctx.admin.flushall('SYNC');
      const run = await rateRun(ctx, system, counter);
      runs.push(run);
      ctx.log(
        `[flow] round ${round + 1}/${ctx.config.rounds} rate limit ${max}/${windowMs} ms: ` +
          `${Math.round(startsPerSecond(run.starts, windowMs))} starts/s, peak ${peakInWindow(run.starts, windowMs)} per window, ` +
          `${run.claims.calls} claim calls (${run.claims.empty} empty)`,
      );
    }
  } finally {
    await counter.uninstall();
    await ctx.admin.flushall('SYNC');
  }
  const perWindowPerWorker = (run: RateRun, calls: number): number =>
    calls / (startSpanMs(run.starts, windowMs) / windowMs) / point.processes;
  const limit = `rateLimit { max: ${max}, windowMs: ${windowMs.toLocaleString('en-US')} }`;
  return [
    {
      key: 'flow.rate.starts_per_s',
      figure: `handler starts/s draining ${jobs.toLocaleString('en-US')} jobs under ${limit} (the limit: ${Math.round((max * 1000) / windowMs)}/s), ${pointLabel(point)}`,
      unit: 'starts/s',
      values: runs.map((run) => startsPerSecond(run.starts, windowMs)),
    },
    {
      key: 'flow.rate.peak_window',
      figure: `most handler starts in any ${windowMs.toLocaleString('en-US')} ms span, same runs (the limit: ${max})`,
      unit: 'starts',
      better: 'lower',
      values: runs.map((run) => peakInWindow(run.starts, windowMs)),
    },
    {
      key: 'flow.rate.claim_calls',
      figure: 'claim calls per window per worker process, same runs (counted by Redis: slow log)',
      unit: 'calls',
      better: 'lower',
      values: runs.map((run) => perWindowPerWorker(run, run.claims.calls)),
    },
    {
      key: 'flow.rate.empty_claim_calls',
      figure: 'of which claimed nothing (limited, or the queue empty), per window per worker process',
      unit: 'calls',
      better: 'lower',
      values: runs.map((run) => perWindowPerWorker(run, run.claims.empty)),
    },
  ];
}

/**
 * Figure 6 (EchoMQ only): what flow control costs and does. Drains over many lanes and over
 * mixed priorities against a plain drain in the same round, and a drain under a queue-wide
 * rate limit: the starts/s it lets through against its limit, and how often the limited
 * workers call the claim script (a limited worker sleeps until the window opens: O(1) calls
 * per window, not a poll).
 */
export async function flowControl(ctx: BenchContext): Promise<SoloMeasurement[]> {
  const system = ctx.systems.find((candidate) => candidate.id === 'echomq');
  if (!system) throw new Error('the flow-control figures need the EchoMQ adapter');
  return [...(await drains(ctx, system)), ...(await rateLimited(ctx, system))];
}
