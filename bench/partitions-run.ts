import type { PartitionBenchConfig } from './partitions-config';
import type { BenchCluster } from './partitions-cluster';
import { CpuMeter, type PhaseCpu } from './partitions-cpu';
import type { BenchHost, BenchHosts } from './partitions-hosts';
import type { AppSettings, EnqueueReport, WorkerReport } from './partitions-ipc';
import {
  completedPerMaster,
  pendingPerMaster,
  placementOf,
  unfinished,
  type Placement,
} from './partitions-shards';
import { waitUntil } from './support/clock';

/** What one run needs: the settings, the cluster, the hosts, the queue picked for the run. */
export interface RunContext {
  readonly config: PartitionBenchConfig;
  readonly cluster: BenchCluster;
  readonly hosts: BenchHosts;
  readonly meter: CpuMeter;
  readonly queue: string;
  /** Waits for a quiet machine (or not, by config); returns the machine's busy share just before. */
  settle(): Promise<number>;
  log(line: string): void;
}

/** One phase: its rate (jobs/s), the CPU it used, and the jobs of each master (cluster order). */
export interface PhaseResult {
  readonly rate: number;
  readonly cpu: PhaseCpu;
  readonly jobsPerMaster: readonly number[];
  /** The machine's busy share (of all cores) in the second before the phase; NaN when not looked at. */
  readonly busyBefore: number;
}

export interface RunResult {
  readonly partitions: number;
  readonly round: number;
  readonly placement: readonly Placement[];
  /** Producers alone, into an idle queue (no worker application open). */
  readonly enqueue: PhaseResult;
  /** Workers alone, on the prefilled jobs: first handler start to last completion. */
  readonly drain: PhaseResult;
  /** Producers and workers at once: first enqueue call to last completion. */
  readonly live: PhaseResult & { readonly enqueueRate: number };
}

function settings(ctx: RunContext, partitions: number, claimAtBoot: boolean): AppSettings {
  const { config, cluster, queue } = ctx;
  return { nodes: cluster.nodes, queue, partitions, concurrency: config.concurrency, claimAtBoot };
}

async function each<T>(hosts: readonly BenchHost[], call: (host: BenchHost) => Promise<T>): Promise<T[]> {
  return Promise.all(hosts.map(call));
}

/** Every producer enqueues its share of the jobs at once; the window spans all of them. */
async function produce(ctx: RunContext): Promise<EnqueueReport> {
  const { jobs, inFlight, phaseTimeoutMs } = ctx.config;
  const producers = ctx.hosts.producers;
  const share = Math.ceil(jobs / producers.length);
  const reports = await each(producers, (host) => {
    const from = producers.indexOf(host) * share;
    return host.enqueue(from, Math.max(0, Math.min(share, jobs - from)), inFlight, phaseTimeoutMs);
  });
  return {
    firstAt: Math.min(...reports.map((report) => report.firstAt)),
    lastAt: Math.max(...reports.map((report) => report.lastAt)),
  };
}

async function awaitCompletions(ctx: RunContext): Promise<void> {
  const { hosts, config } = ctx;
  const check = (): boolean => {
    for (const host of hosts.workers) host.check();
    return hosts.completed >= config.jobs;
  };
  try {
    await waitUntil(check, config.phaseTimeoutMs, `${config.jobs} completions`);
  } catch (error) {
    throw new Error(`${(error as Error).message} (the workers reported ${hosts.completed})`);
  }
}

/** The workers' reports merged, checked against Redis: every job completed, nothing left. */
async function finishDrain(
  ctx: RunContext,
  placement: readonly Placement[],
  reports: readonly (WorkerReport | null)[],
): Promise<{ firstStartAt: number; lastCompletedAt: number; completed: number[] }> {
  const ran = reports.filter((report): report is WorkerReport => report !== null);
  const completedHere = ran.reduce((sum, report) => sum + report.completed, 0);
  const left = await unfinished(ctx.cluster, placement);
  const completed = await completedPerMaster(ctx.cluster, placement);
  const inRedis = completed.reduce((a, b) => a + b, 0);
  if (completedHere !== ctx.config.jobs || inRedis !== ctx.config.jobs || left !== 0) {
    throw new Error(
      `drain of ${ctx.config.jobs}: workers saw ${completedHere} completions, Redis counted ${inRedis}, ${left} left`,
    );
  }
  const started = ran.reduce((sum, report) => sum + report.started, 0);
  if (started !== ctx.config.jobs) ctx.log(`  note: ${started} handler starts for ${ctx.config.jobs} jobs`);
  return {
    firstStartAt: Math.min(...ran.flatMap((report) => report.firstStartAt ?? [])),
    lastCompletedAt: Math.max(...ran.flatMap((report) => report.lastCompletedAt ?? [])),
    completed,
  };
}

/** Prefill with the producers alone, then drain with the workers alone. */
async function prefillThenDrain(
  ctx: RunContext,
  partitions: number,
  placement: readonly Placement[],
): Promise<Pick<RunResult, 'enqueue' | 'drain'>> {
  const { cluster, hosts, meter, config } = ctx;
  await cluster.flushAll();
  await each(hosts.producers, (host) => host.open(settings(ctx, partitions, false)));
  const busyBeforeEnqueue = await ctx.settle();
  const beforeEnqueue = await meter.snapshot();
  const window = await produce(ctx);
  const afterEnqueue = await meter.snapshot();
  await each(hosts.producers, (host) => host.close());
  const pending = await pendingPerMaster(cluster, placement);
  if (pending.reduce((a, b) => a + b, 0) !== config.jobs) {
    throw new Error(`prefill of ${config.jobs}: ${pending.join(' + ')} pending in Redis`);
  }
  // Opened with startProcessors: false and started after the snapshot: the boot is not measured.
  await each(hosts.workers, (host) => host.open(settings(ctx, partitions, false)));
  const busyBeforeDrain = await ctx.settle();
  const beforeDrain = await meter.snapshot();
  await each(hosts.workers, (host) => host.start());
  await awaitCompletions(ctx);
  const afterDrain = await meter.snapshot();
  const drained = await finishDrain(ctx, placement, await each(hosts.workers, (host) => host.close()));
  return {
    enqueue: {
      rate: config.jobs / ((window.lastAt - window.firstAt) / 1000),
      cpu: CpuMeter.between(beforeEnqueue, afterEnqueue),
      jobsPerMaster: pending,
      busyBefore: busyBeforeEnqueue,
    },
    drain: {
      rate: config.jobs / ((drained.lastCompletedAt - drained.firstStartAt) / 1000),
      cpu: CpuMeter.between(beforeDrain, afterDrain),
      jobsPerMaster: drained.completed,
      busyBefore: busyBeforeDrain,
    },
  };
}

/** Workers booted (ordinarily: claiming at bootstrap, reaper on) and idle, then producers enqueue. */
async function live(
  ctx: RunContext,
  partitions: number,
  placement: readonly Placement[],
): Promise<RunResult['live']> {
  const { cluster, hosts, meter, config } = ctx;
  await cluster.flushAll();
  await each(hosts.workers, (host) => host.open(settings(ctx, partitions, true)));
  await each(hosts.producers, (host) => host.open(settings(ctx, partitions, false)));
  const busyBefore = await ctx.settle();
  const before = await meter.snapshot();
  const window = await produce(ctx);
  await awaitCompletions(ctx);
  const after = await meter.snapshot();
  await each(hosts.producers, (host) => host.close());
  const drained = await finishDrain(ctx, placement, await each(hosts.workers, (host) => host.close()));
  return {
    rate: config.jobs / ((drained.lastCompletedAt - window.firstAt) / 1000),
    enqueueRate: config.jobs / ((window.lastAt - window.firstAt) / 1000),
    cpu: CpuMeter.between(before, after),
    jobsPerMaster: drained.completed,
    busyBefore,
  };
}

/** One run of one partition count: the prefill, the drain, and the live phase, each on a flushed cluster. */
export async function runOnce(ctx: RunContext, partitions: number, round: number): Promise<RunResult> {
  const placement = await placementOf(ctx.cluster, ctx.queue, partitions);
  const phases = await prefillThenDrain(ctx, partitions, placement);
  const livePhase = await live(ctx, partitions, placement);
  await ctx.cluster.flushAll();
  return { partitions, round, placement, ...phases, live: livePhase };
}
