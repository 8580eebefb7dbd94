import type { Logger } from '@nestjs/common';
import type { Reachability } from '../connection/reachability';
import type { StateSet } from '../keyspace';
import type { QueueCounts } from '../queue/reads';
import type { LaneView } from '../scripts/lane-reads';
import { monotonicMs } from '../monotonic';

/** What one queue looks like in Redis at a scrape. */
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

/** The reads a snapshot is made of: QueueService's, so keys and scripts stay where they are. */
export interface QueueReads {
  listQueues(): Promise<string[]>;
  counts(queue: string): Promise<Record<StateSet, number>>;
  lanes(queue: string): Promise<LaneView[]>;
  isPaused(queue: string): Promise<boolean>;
  metrics(queue: string): Promise<Record<string, number>>;
}

/** Queues read at once in one snapshot: the rest wait for a free place, so one scrape never floods Redis. */
export const QUEUES_READ_AT_ONCE = 16;
/** How long a snapshot answers every scrape after it was read (Prometheus pairs, dashboards, curl loops). */
export const SNAPSHOT_MAX_AGE_MS = 1_000;

/**
 * Reads every known queue's depths, lanes, pause flag and transition counters from Redis for
 * the metrics a scrape reports. One snapshot costs one SMEMBERS, then four commands per queue
 * (the depths script, the lanes script, EXISTS of the pause flag, HGETALL of the counters),
 * sent together, for QUEUES_READ_AT_ONCE queues at a time. Scrapes that come while a snapshot
 * is read share it, and it answers them for SNAPSHOT_MAX_AGE_MS after, so any number of
 * scrapers costs Redis at most one snapshot a second. While the command connection is down no
 * read is tried: the scrape answers at once with what the process knows itself.
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
    let names: string[];
    try {
      names = await this.reads.listQueues();
    } catch (error) {
      return this.outcome([], false, started, (error as Error).message);
    }
    const queues: QueueSnapshot[] = [];
    let failure: string | undefined;
    for (let at = 0; at < names.length; at += QUEUES_READ_AT_ONCE) {
      const chunk = names.slice(at, at + QUEUES_READ_AT_ONCE);
      const read = await Promise.allSettled(chunk.map((queue) => this.readQueue(queue)));
      for (const each of read) {
        if (each.status === 'fulfilled') queues.push(each.value);
        else failure ??= (each.reason as Error).message;
      }
    }
    return this.outcome(queues, failure === undefined, started, failure);
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
