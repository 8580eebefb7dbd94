import { InvalidArgumentError } from '../../errors';
import { assertQueueName, parsePhysicalQueue } from '../../keyspace';
import type { RedisClient } from '../../scripts';
import {
  forgetPartitions,
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
 * (forRoot's `queues.<name>`, or its @Processor) takes that count for new jobs, and its first
 * use records it in the partitions registry, with the most partitions it ever had: the last
 * declaring process to use a queue wins. A process that declares nothing (an api, the CLI)
 * takes the recorded count, so every producer spreads a queue the same way without repeating
 * its configuration.
 *
 * The registry is one small hash. A copy younger than refreshMs is used as it is; an older one
 * is used while a read refreshes it in the background, and one older than twice that waits for
 * the read, so a process quiet for an hour never acts on an hour-old layout. A declaring process
 * whose read finds its count missing or changed (the registry lost, or another process declaring
 * another count) records its own again at its next use.
 */
export class PartitionDirectory {
  private recorded = new Map<string, RecordedPartitions>();
  private readAt = -Infinity;
  private reading?: Promise<void>;
  /** Bumped by remove(): a read that began before it may hold the removed entry. */
  private epoch = 0;
  /** Queues whose declared count this process has recorded, with the count it recorded. */
  private readonly declaredHere = new Map<string, number>();
  /** Queues whose recorded count a read found missing or changed: recorded again at their next use. */
  private readonly repairs = new Set<string>();

  private readonly layouts = new Map<string, { count: number; most: number; layout: PartitionLayout }>();

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
    // The read first: one that finds this process's count missing or changed has it recorded again now.
    // (Checked here too: a fresh copy, the usual case on an enqueue, then costs no await.)
    if (monotonicMs() - this.readAt >= this.refreshMs) await this.fresh();
    const declared = this.declared(queue);
    if (declared !== undefined && this.declaredHere.get(queue) !== declared) {
      await this.record(queue, declared);
    } else if (declared !== undefined && this.repairs.delete(queue)) {
      // A repair that fails (the registry's master unreachable) fails no caller: this process
      // goes by its own count, and its next read that finds the entry wrong tries again.
      await this.record(queue, declared).catch(() => undefined);
    }
    return this.knownLayout(queue);
  }

  /**
   * The layout of `queue` for a write that creates work (enqueue, submit, a schedule). A
   * partition named directly must be one its queue has (an index below the most partitions it
   * ever had): a job written past them would be served by no worker and found by no lookup
   * through the queue's name. Throws InvalidArgumentError before anything is sent.
   */
  async writeLayout(queue: string): Promise<PartitionLayout> {
    const parsed = parsePhysicalQueue(queue);
    if (parsed?.partition === undefined) return this.layout(queue);
    const logical = await this.layout(parsed.queue);
    const span = logical.partitioned ? logical.physical.length - 1 : 0;
    if (parsed.partition >= span) {
      const has = span === 0 ? 'is not partitioned' : `has partitions 0 to ${span - 1}`;
      throw new InvalidArgumentError(
        `'${queue}' names partition ${parsed.partition} of queue '${parsed.queue}', which ${has}: no worker ` +
          `would serve a job written there; enqueue to '${parsed.queue}'`,
      );
    }
    return directLayout(queue);
  }

  /** A queue's layout as this process last knew it, without asking Redis (unpartitioned when unknown). */
  knownLayout(queue: string): PartitionLayout {
    const recorded = this.recorded.get(queue);
    const count = this.declared(queue) ?? recorded?.count ?? 1;
    const most = recorded?.most ?? count;
    // One object per queue while its counts stay: every enqueue asks, and the layout is read only.
    const cached = this.layouts.get(queue);
    if (cached && cached.count === count && cached.most === most) return cached.layout;
    const layout = partitionLayout(queue, count, most);
    this.layouts.set(queue, { count, most, layout });
    return layout;
  }

  /** Forgets what this process recorded, so the next use records the declared count again (obliterate). */
  forget(queue: string): void {
    this.declaredHere.delete(queue);
  }

  /**
   * Removes the queue's entry from the registry and from this process's copy: every physical
   * queue of it is gone (obliterate), so the queue starts again unpartitioned, or with the
   * count declared at its next use. The next layout waits for a fresh read of the registry.
   */
  async remove(queue: string): Promise<void> {
    assertQueueName(queue);
    await this.bounded(() => forgetPartitions(this.redis(), this.keyPrefix, queue));
    this.epoch++;
    this.declaredHere.delete(queue);
    this.repairs.delete(queue);
    this.recorded.delete(queue);
    this.readAt = -Infinity;
  }

  private async record(queue: string, count: number): Promise<void> {
    const most = await this.bounded(() => recordPartitions(this.redis(), this.keyPrefix, queue, count));
    this.declaredHere.set(queue, count);
    this.recorded.set(queue, { count, most });
  }

  /**
   * Reads the registry when the copy is older than refreshMs: waiting for the read when the
   * copy is older than twice that (or there is none), else in the background. A failed read
   * keeps the last copy; only a process that never read the registry meets the failure.
   */
  private async fresh(): Promise<void> {
    const age = monotonicMs() - this.readAt;
    if (age < this.refreshMs) return;
    const first = this.readAt === -Infinity;
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    if (age < 2 * this.refreshMs) {
      void this.reading.catch(() => undefined);
      return;
    }
    try {
      await this.reading;
    } catch (error) {
      // The registry's master unreachable: the queue's own may not be, and the copy is the
      // best this process knows.
      if (first) throw error;
    }
  }

  private async read(): Promise<void> {
    const epoch = this.epoch;
    const read = await this.bounded(() => readRecordedPartitions(this.redis(), this.keyPrefix));
    // A remove() meanwhile: this read may hold the entry it removed; the next read is awaited.
    if (epoch !== this.epoch) return;
    for (const [queue, count] of this.declaredHere) {
      const seen = read.get(queue);
      // Missing (a declared 1 is never recorded over no entry) or another count: recorded
      // again at the next use.
      if (seen ? seen.count !== count : count > 1) this.repairs.add(queue);
      // What this process declared stays in its copy, even if the read began before the record.
      read.set(queue, { count, most: Math.max(count, seen?.most ?? count) });
    }
    this.recorded = read;
    this.readAt = monotonicMs();
  }
}
