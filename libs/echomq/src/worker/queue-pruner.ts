import type { Logger } from '@nestjs/common';
import { queueRegistryKey } from '../keyspace';
import type { QueueService } from '../queue/queue.service';
import { execAll } from '../connection/exec-all';

/**
 * A registered queue with nothing in it, not paused, whose newest event is older than
 * this (or that has none) drops out of the registry, so the reapers' walk follows what
 * is live rather than every name ever used (docs/options.md, "The queue registry").
 * A producer re-registers a queue it keeps using (QueueService.register), a worker the
 * queues it serves (when its reaper finds them missing), so a dropped queue comes back as soon as it is used.
 */
export const QUEUE_IDLE_MS = 24 * 3_600_000;

/** Queues checked at once in a prune pass (each check is one round trip to its own slot). */
const PRUNE_PARALLEL = 32;

/** Drops idle queues from the registry (the reaper runs it every PRUNE_EVERY_MS). */
export class QueuePruner {
  constructor(
    private readonly queues: QueueService,
    private readonly logger: Logger,
    /** Whether a refusal is a full Redis's (said once by the reaper); such a check is left for the next pass. */
    private readonly isFull: (error: unknown) => boolean,
  ) {}

  /** Drops the idle ones of `candidates` from the registry and returns them. */
  async prune(candidates: readonly string[]): Promise<string[]> {
    const pruned: string[] = [];
    for (let start = 0; start < candidates.length; start += PRUNE_PARALLEL) {
      const chunk = candidates.slice(start, start + PRUNE_PARALLEL);
      await Promise.all(
        chunk.map(async (queue) => {
          try {
            if (await this.pruneOne(queue)) pruned.push(queue);
          } catch (error) {
            if (this.isFull(error)) return; // (its MULTI of reads is refused too; checked next pass)
            this.logger.warn(
              `Reaper could not check queue ${queue} for idleness: ${(error as Error).message}`,
            );
          }
        }),
      );
    }
    if (pruned.length > 0) this.logger.log(`Dropped ${pruned.length} idle queue(s) from the registry`);
    return pruned;
  }

  private async pruneOne(queue: string): Promise<boolean> {
    if (!(await this.isIdle(queue))) return false;
    const redis = this.queues.context(queue).redis;
    await redis.srem(queueRegistryKey(this.queues.settings.keyPrefix), queue);
    // A job may have arrived between the check and the SREM, from a producer that
    // registered the queue just before: look again, and put the name back if so.
    if (await this.isIdle(queue)) return true;
    await this.queues.reregister([queue]);
    return false;
  }

  /**
   * Empty in all four sets, not paused, and no event for QUEUE_IDLE_MS by the server's
   * clock: one MULTI on the queue's own slot (the stream id starts with its server-time ms).
   */
  private async isIdle(queue: string): Promise<boolean> {
    const { redis, keys } = this.queues.context(queue);
    const values = await execAll(
      redis
        .multi()
        .zcard(keys.pending)
        .zcard(keys.active)
        .zcard(keys.schedule)
        .zcard(keys.dead)
        .exists(keys.paused)
        .xrevrange(keys.events, '+', '-', 'COUNT', 1)
        .time(),
      `The idleness check of queue ${queue}`,
    );
    const [pending, active, schedule, dead, paused] = values.slice(0, 5).map(Number);
    if (pending + active + schedule + dead + paused > 0) return false;
    const newest = (values[5] as [string, string[]][])[0];
    if (!newest) return true;
    const [seconds, micros] = values[6] as [string, string];
    const nowMs = Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
    return nowMs - Number(newest[0].split('-')[0]) >= QUEUE_IDLE_MS;
  }
}
