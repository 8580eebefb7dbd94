import { InvalidArgumentError, JobNotFoundError } from '../../errors';
import type { QueueEventReaders } from '../../events/event-readers';
import type { QueueEventListener } from '../../events/queue-event';
import type { JobId } from '../../ids';
import { assertJobId } from '../../keyspace';
import { monotonicMs } from '../../monotonic';
import { readJobView } from '../../scripts';
import { toJobView } from '../job-view';
import { candidatesForId } from '../partitions/partition-layout';
import { PARTITIONS_REFRESH_MS } from '../partitions/partition-directory';
import { ScheduleSurface } from './schedule-surface';

/**
 * QueueService's waits and subscriptions, on the queues' event streams. Of a partitioned queue
 * (docs/partitions.md) a wait follows the stream of the job's partition and a subscription
 * every partition's.
 */
export abstract class EventSurface extends ScheduleSurface {
  /** One event reader per queue someone listens to, closed when idle. */
  protected abstract readonly readers: QueueEventReaders;

  /**
   * Waits for a job to finish: resolves with its result (when it completes) or rejects
   * with JobFailedError (dead), JobNotFoundError (removed or unknown) or WaitTimeoutError.
   * Uses a dedicated connection for the blocking read while it waits.
   */
  async waitFor<R = unknown>(queue: string, id: string, timeoutMs = 30_000): Promise<R> {
    const jobId = assertJobId(id);
    // Past 2^31-1 ms Node's timers fire at once, which would turn a long wait into an instant timeout.
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 0 || timeoutMs > 2_147_483_647) {
      throw new InvalidArgumentError('timeoutMs must be an integer from 0 to 2147483647');
    }
    // The wait follows the stream of the physical queue the job is in: of the two its id may
    // be in (the partition it names, the queue itself), the likelier first (candidatesForId).
    const [likely, other] = candidatesForId(await this.partitionLayout(queue), jobId);
    const until = monotonicMs() + timeoutMs;
    const follow = (physical: string): Promise<R> =>
      this.readers.waitFor(physical, jobId, Math.max(0, Math.ceil(until - monotonicMs())), () =>
        this.getJob(queue, jobId),
      ) as Promise<R>;
    if (other === undefined || (await this.holds(likely, jobId))) return follow(likely);
    if (await this.holds(other, jobId)) return follow(other);
    // In neither: it finished a moment ago, in one of the two, whose reader still knows how.
    try {
      return await follow(likely);
    } catch (error) {
      if (!(error instanceof JobNotFoundError)) throw error;
      return follow(other);
    }
  }

  /** Whether the physical queue holds job `id` (a row of a live or retained job; readJobView always answers). */
  private async holds(physical: string, id: JobId): Promise<boolean> {
    return toJobView(physical, id, await readJobView(this.context(physical), id)) !== undefined;
  }

  /**
   * Calls listener with every event of the queue from now on (completed, failed, dead,
   * ...). Returns the function that unsubscribes. All subscriptions and waits of one
   * queue share one connection, closed once none is left for a while. A listener that
   * throws or rejects is logged; it never stops other listeners or waits. Of a partitioned
   * queue, every partition's events (each partition's in order; two partitions' interleave),
   * including partitions a raised count adds later (looked for every PARTITIONS_REFRESH_MS).
   */
  async subscribe(queue: string, listener: QueueEventListener): Promise<() => void> {
    const followed = new Map<string, () => void>();
    let stopped = false;
    const follow = async (): Promise<void> => {
      for (const physical of (await this.partitionLayout(queue)).physical) {
        if (followed.has(physical)) continue;
        const stop = await this.readers.subscribe(physical, listener);
        // Unsubscribed, or followed by a concurrent look, while this one was starting.
        if (stopped || followed.has(physical)) stop();
        else followed.set(physical, stop);
      }
    };
    try {
      await follow();
    } catch (error) {
      for (const stop of followed.values()) stop();
      throw error;
    }
    const looks = setInterval(() => void follow().catch(() => undefined), PARTITIONS_REFRESH_MS);
    looks.unref();
    return () => {
      stopped = true;
      clearInterval(looks);
      for (const stop of followed.values()) stop();
      followed.clear();
    };
  }
}
