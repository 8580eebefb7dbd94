import type { QueueService } from '@app/echomq';
import type { LaneDepth, QueueDepths } from './overview.types';

/** The most queues one overview reads; the registry's others are counted, not read. */
export const OVERVIEW_QUEUES_MAX = 100;

/** One queue as read for an overview, with its raw counters (the history turns them into deltas). */
export interface QueueReading {
  readonly queue: string;
  readonly counts: QueueDepths;
  readonly paused: boolean;
  readonly lanes: LaneDepth[];
  readonly counters: Record<string, number>;
}

export interface QueuesReading {
  readonly queuesTotal: number;
  readonly queues: QueueReading[];
}

/**
 * Reads what the overview shows, through QueueService: the registry (SMEMBERS), then for each
 * of the first OVERVIEW_QUEUES_MAX queues by name its four depths (one script), its lanes (one
 * script), its counters (HGETALL) and its pause flag (EXISTS). A partitioned queue is one queue
 * here, listed once by its name: QueueService reads each of its physical queues (its
 * partitions and itself) and sums and merges them. The per-queue commands are all issued at
 * once, so one reading is two round trips and 1 + 4 x physical queues commands, none of which
 * writes.
 */
export async function readQueues(queues: QueueService): Promise<QueuesReading> {
  const names = await queues.listQueues();
  const shown = names.slice(0, OVERVIEW_QUEUES_MAX);
  const readings = await Promise.all(
    shown.map(async (queue): Promise<QueueReading> => {
      const [counts, lanes, counters, paused] = await Promise.all([
        queues.counts(queue),
        queues.lanes(queue),
        queues.metrics(queue),
        queues.isPaused(queue),
      ]);
      return {
        queue,
        counts,
        paused,
        lanes: lanes.map(({ lane, pending, active, paused: lanePaused, held }) => ({
          lane,
          pending,
          active,
          paused: lanePaused,
          held,
        })),
        counters,
      };
    }),
  );
  return { queuesTotal: names.length, queues: readings };
}
