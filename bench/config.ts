/** How big each figure is, in the full run and in --quick (CI) mode. */

export interface DrainPoint {
  readonly processes: number;
  readonly concurrency: number;
}

export interface BenchConfig {
  readonly mode: 'full' | 'quick';
  /** Rounds per figure; each round runs every system once, in the same order. */
  readonly rounds: number;
  readonly enqueue: { readonly jobs: number; readonly inFlight: number; readonly warmUpJobs: number };
  /** Every system gets the same batches; EchoMQ's adapter splits one over ENQUEUE_MANY_MAX (the label says so). */
  readonly bulk: { readonly jobs: number; readonly batch: number };
  readonly drain: {
    readonly jobs: number;
    readonly points: readonly DrainPoint[];
    /** Unmeasured jobs each worker host drains once before the figure, to warm its JIT. */
    readonly warmUpJobs: number;
  };
  /** The cold drains: a freshly forked worker host per run, timed over its first `jobs` jobs. */
  readonly cold: { readonly jobs: number; readonly points: readonly DrainPoint[] };
  /** One idle worker process serving `queues` empty queues; MONITOR counts its commands. */
  readonly idle: {
    readonly queues: number;
    /** After the worker started, before counting: its start-up is not idle. */
    readonly settleMs: number;
    readonly windowMs: number;
    /** Rounds of this figure (all systems at once, each on its own redis-server: see figures/idle-cost.ts). */
    readonly rounds: number;
  };
  readonly latency: {
    readonly ratePerSecond: number;
    readonly jobs: number;
    /** Paced jobs sent first and left out of the percentiles. */
    readonly warmUpJobs: number;
    readonly concurrency: number;
  };
  readonly cost: { readonly jobs: number; readonly inFlight: number; readonly concurrency: number };
  /** The flow-control figures (EchoMQ only): drains over many lanes, mixed priorities, a rate limit. */
  readonly flow: {
    /** Jobs per drain; the plain, the lanes and the priorities drains take the same number. */
    readonly jobs: number;
    readonly lanes: number;
    readonly point: DrainPoint;
    /** The rate-limited drain: rateLimit { max, windowMs }, `jobs` take about jobs / max windows. */
    readonly rate: {
      readonly jobs: number;
      readonly max: number;
      readonly windowMs: number;
      readonly point: DrainPoint;
    };
  };
  /** Longest one run may take before the benchmark gives up. */
  readonly runTimeoutMs: number;
}

/** Jobs per bulk call for every system (issue 15: 1,000, what EchoMQ's ENQUEUE_MANY_MAX is meant to allow). */
const BULK_BATCH = 1_000;

const ALL_POINTS: readonly DrainPoint[] = [
  { processes: 1, concurrency: 1 },
  { processes: 1, concurrency: 10 },
  { processes: 1, concurrency: 50 },
  { processes: 1, concurrency: 200 },
  { processes: 2, concurrency: 50 },
];

export const FULL: BenchConfig = {
  mode: 'full',
  rounds: 3,
  enqueue: { jobs: 20_000, inFlight: 100, warmUpJobs: 1_000 },
  bulk: { jobs: 50_000, batch: BULK_BATCH },
  drain: { jobs: 20_000, points: ALL_POINTS, warmUpJobs: 5_000 },
  cold: { jobs: 20_000, points: ALL_POINTS },
  // Settled past the node lease's parking (10 s without a mint), so the window sees the steady state.
  idle: { queues: 10, settleMs: 15_000, windowMs: 60_000, rounds: 3 },
  latency: { ratePerSecond: 500, jobs: 2_500, warmUpJobs: 250, concurrency: 10 },
  cost: { jobs: 20_000, inFlight: 100, concurrency: 50 },
  flow: {
    jobs: 20_000,
    lanes: 1_000,
    point: { processes: 1, concurrency: 50 },
    rate: { jobs: 3_000, max: 500, windowMs: 1_000, point: { processes: 2, concurrency: 50 } },
  },
  runTimeoutMs: 300_000,
};

export const QUICK: BenchConfig = {
  mode: 'quick',
  rounds: 3,
  enqueue: { jobs: 2_000, inFlight: 100, warmUpJobs: 200 },
  bulk: { jobs: 5_000, batch: BULK_BATCH },
  drain: {
    jobs: 2_000,
    points: [
      { processes: 1, concurrency: 50 },
      { processes: 2, concurrency: 50 },
    ],
    warmUpJobs: 1_000,
  },
  cold: {
    jobs: 2_000,
    points: [
      { processes: 1, concurrency: 1 },
      { processes: 1, concurrency: 50 },
    ],
  },
  idle: { queues: 10, settleMs: 3_000, windowMs: 10_000, rounds: 1 },
  latency: { ratePerSecond: 500, jobs: 250, warmUpJobs: 50, concurrency: 10 },
  cost: { jobs: 2_000, inFlight: 100, concurrency: 50 },
  flow: {
    jobs: 2_000,
    lanes: 1_000,
    point: { processes: 1, concurrency: 50 },
    rate: { jobs: 1_000, max: 500, windowMs: 1_000, point: { processes: 2, concurrency: 50 } },
  },
  runTimeoutMs: 60_000,
};

export function mostProcesses(config: BenchConfig): number {
  return Math.max(1, ...config.drain.points.map((point) => point.processes));
}
