/** Sizes of `npm run bench:partitions` (full) and `--quick`, and the flags that override them. */

export interface PartitionBenchConfig {
  readonly mode: 'full' | 'quick';
  /** Jobs per phase of one run. */
  readonly jobs: number;
  /** Jobs of one unmeasured run of each count before the first round (JIT warm-up); 0 for none. */
  readonly warmUpJobs: number;
  /** Runs of each partition count; rounds alternate the counts (1, 3, 1, 3, ...). */
  readonly rounds: number;
  /** The partition counts compared. */
  readonly partitions: readonly number[];
  /** Producer processes; the jobs are shared out evenly. */
  readonly producers: number;
  /** enqueue() calls each producer keeps outstanding (the client merges them into script calls). */
  readonly inFlight: number;
  /** Worker processes, each one Nest application with the @Processor. */
  readonly workers: number;
  /** `concurrency` of the queue in each worker process. */
  readonly concurrency: number;
  /** The queue's name, or the first of the names tried when `spread` is on. */
  readonly queue: string;
  /**
   * Pick the first name (queue, queue1, queue2, ...) whose partitions land on as many different
   * masters as they can, so that the largest count measures a spread queue, not a hash collision.
   */
  readonly spread: boolean;
  /**
   * Before each run, wait up to this long for a quiet machine (see settle() in partitions-cpu.ts);
   * 0 starts at once. For a machine shared with other work.
   */
  readonly settleMs: number;
  /** Longest one phase may take before the benchmark gives up. */
  readonly phaseTimeoutMs: number;
}

/** settle() waits for a second in which the machine was at most this busy (share of all cores). */
export const QUIET_BUSY_SHARE = 0.15;

export const FULL: PartitionBenchConfig = {
  mode: 'full',
  jobs: 100_000,
  warmUpJobs: 10_000,
  rounds: 3,
  partitions: [1, 3],
  producers: 1,
  inFlight: 200,
  workers: 2,
  concurrency: 50,
  queue: 'hot',
  spread: true,
  settleMs: 120_000,
  phaseTimeoutMs: 300_000,
};

export const QUICK: PartitionBenchConfig = {
  ...FULL,
  mode: 'quick',
  jobs: 2_000,
  warmUpJobs: 0,
  rounds: 1,
  settleMs: 0,
  phaseTimeoutMs: 60_000,
};

const USAGE = `usage: partitions.js [--quick] [--jobs N] [--rounds N] [--partitions 1,3] [--producers N]
  [--in-flight N] [--workers N] [--concurrency N] [--queue NAME] [--no-spread] [--warm-up JOBS] [--settle SECONDS]`;

function positive(flag: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} takes a positive integer\n${USAGE}`);
  return value;
}

function orZero(flag: string, text: string | undefined): number {
  return text === '0' ? 0 : positive(flag, text);
}

/** The config the command line asks for: the quick or the full sizes, then each flag given. */
export function configFromArgs(argv: readonly string[]): PartitionBenchConfig {
  let config: PartitionBenchConfig = argv.includes('--quick') ? QUICK : FULL;
  for (let at = 0; at < argv.length; at++) {
    const flag = argv[at];
    const value = (): string | undefined => argv[++at];
    switch (flag) {
      case '--quick':
        break;
      case '--jobs':
        config = { ...config, jobs: positive(flag, value()) };
        break;
      case '--rounds':
        config = { ...config, rounds: positive(flag, value()) };
        break;
      case '--partitions':
        config = { ...config, partitions: (value() ?? '').split(',').map((part) => positive(flag, part)) };
        break;
      case '--producers':
        config = { ...config, producers: positive(flag, value()) };
        break;
      case '--in-flight':
        config = { ...config, inFlight: positive(flag, value()) };
        break;
      case '--workers':
        config = { ...config, workers: positive(flag, value()) };
        break;
      case '--concurrency':
        config = { ...config, concurrency: positive(flag, value()) };
        break;
      case '--queue':
        config = { ...config, queue: value() ?? '' };
        break;
      case '--warm-up':
        config = { ...config, warmUpJobs: orZero(flag, value()) };
        break;
      case '--settle':
        config = { ...config, settleMs: orZero(flag, value()) * 1000 };
        break;
      case '--no-spread':
        config = { ...config, spread: false };
        break;
      default:
        throw new Error(`unknown argument ${flag}\n${USAGE}`);
    }
  }
  return config;
}
