import { assertQueueName, parsePhysicalQueue } from '../../keyspace';
import type { RedisClient } from '../../scripts';
import {
  readRecordedPartitions,
  recordPartitions,
  type RecordedPartitions,
} from '../../scripts/record-partitions';
import { monotonicMs } from '../../monotonic';
import { directLayout, partitionLayout, type PartitionLayout } from './partition-layout';

/** How long a process trusts the partitions registry it read before reading it again. */
export const PARTITIONS_REFRESH_MS = 5_000;

/**
 * Each queue's partition layout in this process. A queue declared here with `partitions`
 * (forRoot's `queues.<name>`, or its @Processor) takes that count for new jobs, and the first
 * use records it in the partitions registry, with the most partitions it ever had. A process
 * that declares nothing (an api, the CLI) takes the recorded count, so every producer spreads
 * a queue the same way without repeating its configuration. The registry is one small hash,
 * read once and then again in the background at most every PARTITIONS_REFRESH_MS: a changed
 * count reaches undeclaring processes within that.
 */
export class PartitionDirectory {
  private recorded = new Map<string, RecordedPartitions>();
  private readAt = -Infinity;
  private reading?: Promise<void>;
  /** Queues whose declared count this process has recorded, with the count it recorded. */
  private readonly declaredHere = new Map<string, number>();

  constructor(
    private readonly redis: () => RedisClient,
    private readonly keyPrefix: string,
    /** The count this process declares for a queue, if it declares one. */
    private readonly declared: (queue: string) => number | undefined,
    /** Bounds a registry read or write that nothing else bounds (see untilOutage). */
    private readonly bounded: <T>(work: () => Promise<T>) => Promise<T> = (work) => work(),
    private readonly refreshMs = PARTITIONS_REFRESH_MS,
  ) {}

  /**
   * The layout of `queue`: a queue name (checked before anything is sent), or a partition's own
   * name (`emails#2`), which addresses that partition alone.
   */
  async layout(queue: string): Promise<PartitionLayout> {
    const parsed = parsePhysicalQueue(queue);
    if (parsed?.partition !== undefined) return directLayout(queue);
    assertQueueName(queue);
    const declared = this.declared(queue);
    if (declared !== undefined && this.declaredHere.get(queue) !== declared)
      await this.record(queue, declared);
    await this.fresh();
    const recorded = this.recorded.get(queue);
    const count = declared ?? recorded?.count ?? 1;
    return partitionLayout(queue, count, recorded?.most ?? count);
  }

  /** The count new jobs of `queue` spread over as this process last knew it, without asking Redis (1 when unknown). */
  knownCount(queue: string): number {
    return this.declared(queue) ?? this.recorded.get(queue)?.count ?? 1;
  }

  /** Forgets what this process recorded, so the next use records the declared count again (obliterate). */
  forget(queue: string): void {
    this.declaredHere.delete(queue);
  }

  private async record(queue: string, count: number): Promise<void> {
    const most = await this.bounded(() => recordPartitions(this.redis(), this.keyPrefix, queue, count));
    this.declaredHere.set(queue, count);
    this.recorded.set(queue, { count, most });
  }

  /**
   * Reads the registry when it was never read (awaited), and again in the background once it is
   * older than refreshMs; a failed background read keeps the last layout.
   */
  private async fresh(): Promise<void> {
    const stale = monotonicMs() - this.readAt >= this.refreshMs;
    if (!stale) return;
    const first = this.readAt === -Infinity;
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    if (first) await this.reading;
    else void this.reading.catch(() => undefined);
  }

  private async read(): Promise<void> {
    const read = await this.bounded(() => readRecordedPartitions(this.redis(), this.keyPrefix));
    // What this process declared and recorded stays, even if the read began before the record.
    for (const [queue, count] of this.declaredHere) {
      const seen = read.get(queue);
      read.set(queue, { count, most: Math.max(count, seen?.most ?? count) });
    }
    this.recorded = read;
    this.readAt = monotonicMs();
  }
}
