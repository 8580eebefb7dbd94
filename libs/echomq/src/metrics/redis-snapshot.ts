import type { Logger } from '@nestjs/common';
import type { Reachability } from '../connection/reachability';
import { isTransientRedisError } from '../errors';
import type { StateSet } from '../keyspace';
import type { QueueCounts } from '../queue/reads';
import type { LaneView } from '../scripts/lane-reads';
import { monotonicMs } from '../monotonic';
import { packReadGroups, type WeightedQueue } from './read-groups';

/**
 * What one queue looks like in Redis at a scrape; of a partitioned queue, its partitions read
 * and summed under its own name (depths and counters added, lanes merged by name, paused when
 * every partition is).
 */
export interface QueueSnapshot {
  readonly queue: string;
  readonly counts: QueueCounts;
  readonly lanes: readonly LaneView[];
  readonly paused: boolean;
  /** The queue's transition counters (its metrics hash): cluster-wide totals, bumped by each script. */
  readonly transitions: Readonly<Record<string, number>>;
}

export interface RedisSnapshot {
  /** The queues read, by name; a queue whose reads failed is left out. */
  readonly queues: readonly QueueSnapshot[];
  /** Whether every read answered: false when Redis is unreachable or a queue's reads failed. */
  readonly complete: boolean;
  /** How long the reads took. */
  readonly readMs: number;
}

/**
 * The reads a snapshot is made of: QueueService's, so keys and scripts stay where they are, and
 * a partitioned queue is read as the api reads it (each read fans out over its partitions).
 */
export interface QueueReads {
  /** Queue names, a partitioned queue once by its own name. */
  listQueues(): Promise<string[]>;
  /** Where the queue's jobs live: its physical queues are what reading it costs. */
  partitionLayout(queue: string): Promise<{ readonly physical: readonly string[] }>;
  counts(queue: string): Promise<Record<StateSet, number>>;
  lanes(queue: string): Promise<LaneView[]>;
  isPaused(queue: string): Promise<boolean>;
  metrics(queue: string): Promise<Record<string, number>>;
}

/**
 * Physical queues read at once in one snapshot (an unpartitioned queue is one, a partitioned
 * queue one per partition and one for itself): the rest wait for the next group, so one scrape
 * never floods Redis. A partitioned queue with more physical queues than this is a group alone.
 */
export const QUEUES_READ_AT_ONCE = 16;
/** How long a snapshot answers every scrape after it was read (Prometheus pairs, dashboards, curl loops). */
export const SNAPSHOT_MAX_AGE_MS = 1_000;
/**
 * How long one snapshot may take: a scrape answers by then with what was read (half of
 * Prometheus's default 10 s scrape timeout), however silent Redis is and however many queues.
 */
export const SNAPSHOT_BUDGET_MS = 5_000;

/** The queues read so far by one snapshot, and whether it is to stop (its budget is spent). */
interface Progress {
  readonly queues: QueueSnapshot[];
  failure?: string;
  over: boolean;
}

/**
 * Reads every known queue's depths, lanes, pause flag and transition counters from Redis for
 * the metrics a scrape reports. One snapshot costs one SMEMBERS (and, at most every 5 s, one
 * HGETALL of the partitions registry), then four commands per physical queue (the depths script,
 * the lanes script, EXISTS of the pause flag, HGETALL of the counters), sent together, for
 * groups of at most QUEUES_READ_AT_ONCE physical queues at a time; a partitioned queue is read
 * whole within one group and reported once, under its own name. Scrapes that come while a snapshot
 * is read share it, and it answers them for SNAPSHOT_MAX_AGE_MS after, so any number of
 * scrapers costs Redis at most one snapshot a second. While the command connection is down no
 * read is tried: the scrape answers at once with what the process knows itself. Otherwise a
 * snapshot stops at the first group of queues that met a Redis timeout or outage (the next
 * would only wait out its deadline too), and at its budget (SNAPSHOT_BUDGET_MS): what was read
 * by then is reported, the other queues are left out, and it is incomplete (echomq_redis_up 0).
 */
export class RedisSnapshots {
  private latest?: { readonly at: number; readonly snapshot: RedisSnapshot };
  private inFlight?: Promise<RedisSnapshot>;
  /** Whether the last snapshot was incomplete: its failure is logged once, not every scrape. */
  private failing = false;

  constructor(
    private readonly reads: QueueReads,
    private readonly reachability: Pick<Reachability, 'reachable'>,
    private readonly logger: Pick<Logger, 'warn' | 'log'>,
    private readonly maxAgeMs = SNAPSHOT_MAX_AGE_MS,
    private readonly budgetMs = SNAPSHOT_BUDGET_MS,
  ) {}

  /** The latest snapshot if it is fresh, else the one being read, else a new one. Never rejects. */
  get(): Promise<RedisSnapshot> {
    const latest = this.latest;
    if (latest && monotonicMs() - latest.at < this.maxAgeMs) return Promise.resolve(latest.snapshot);
    this.inFlight ??= this.read().then((snapshot) => {
      this.latest = { at: monotonicMs(), snapshot };
      this.inFlight = undefined;
      return snapshot;
    });
    return this.inFlight;
  }

  private async read(): Promise<RedisSnapshot> {
    const started = monotonicMs();
    if (!this.reachability.reachable) return this.outcome([], false, started, 'Redis is unreachable');
    const progress: Progress = { queues: [], over: false };
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<'over'>((resolve) => {
      timer = setTimeout(() => resolve('over'), this.budgetMs);
    });
    const ended = await Promise.race([this.readAll(progress), budget]);
    clearTimeout(timer);
    // Past its budget, the group in flight is left to its deadlines and no other is started.
    progress.over = true;
    if (ended === 'over') progress.failure ??= `not read within ${this.budgetMs} ms`;
    const { queues, failure } = progress;
    return this.outcome([...queues], failure === undefined, started, failure);
  }

  /**
   * Reads the queues in groups of at most QUEUES_READ_AT_ONCE physical queues, until one group
   * meets a transient error or the budget ends.
   */
  private async readAll(progress: Progress): Promise<void> {
    let groups: string[][];
    try {
      groups = packReadGroups(await this.weighted(await this.reads.listQueues()), QUEUES_READ_AT_ONCE);
    } catch (error) {
      progress.failure = (error as Error).message;
      return;
    }
    for (const chunk of groups) {
      if (progress.over) return;
      const read = await Promise.allSettled(chunk.map((queue) => this.readQueue(queue)));
      if (progress.over) return;
      let transient = false;
      for (const each of read) {
        if (each.status === 'fulfilled') progress.queues.push(each.value);
        else {
          progress.failure ??= (each.reason as Error).message;
          transient ||= isTransientRedisError(each.reason);
        }
      }
      if (transient) return;
    }
  }

  /**
   * The queues with what reading each costs (the layouts come from memory once the partitions
   * registry was read). A name whose layout cannot be had (a registry entry that is no queue
   * name) weighs one: its own reads fail in turn and leave it out, as any queue's would.
   */
  private weighted(names: readonly string[]): Promise<WeightedQueue[]> {
    return Promise.all(
      names.map(async (queue) => {
        const layout = await this.reads.partitionLayout(queue).catch(() => undefined);
        return { queue, physical: layout?.physical.length ?? 1 };
      }),
    );
  }

  private async readQueue(queue: string): Promise<QueueSnapshot> {
    const [counts, lanes, paused, transitions] = await Promise.all([
      this.reads.counts(queue),
      this.reads.lanes(queue),
      this.reads.isPaused(queue),
      this.reads.metrics(queue),
    ]);
    return { queue, counts, lanes, paused, transitions };
  }

  private outcome(
    queues: QueueSnapshot[],
    complete: boolean,
    started: number,
    failure?: string,
  ): RedisSnapshot {
    if (!complete && !this.failing) {
      this.logger.warn(
        `Metrics: the queues could not all be read from Redis (${failure}); reported without them`,
      );
    } else if (complete && this.failing) this.logger.log('Metrics: every queue is read from Redis again');
    this.failing = !complete;
    return { queues, complete, readMs: monotonicMs() - started };
  }
}
