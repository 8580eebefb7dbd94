import type { QueueService } from '@app/echomq';
import { packReadGroups } from '@app/echomq/metrics/read-groups';
import type { LaneDepth, QueueDepths } from './overview.types';

/** The most queues one overview reads; the registry's others are counted, not read. */
export const OVERVIEW_QUEUES_MAX = 100;
/**
 * The most physical queues one overview reads at once (an unpartitioned queue is one, a
 * partitioned queue one per partition and one for itself). Four commands each, so at most 400
 * commands of one reading are in flight, as when every shown queue was one physical queue.
 */
export const OVERVIEW_PHYSICAL_AT_ONCE = OVERVIEW_QUEUES_MAX;

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
 * script), its counters (HGETALL) and its pause flag (EXISTS), none of which writes. A
 * partitioned queue is one queue here, listed once by its name: QueueService reads each of its
 * physical queues (its partitions and itself) and sums and merges them, so it costs four
 * commands per physical queue. The queues are read in groups of at most
 * OVERVIEW_PHYSICAL_AT_ONCE physical queues, one group after another, a partitioned queue whole
 * within one group; their layouts come from memory (one HGETALL of the partitions registry at
 * most every 5 s). So one reading is 1 + 4 x physical queues commands, in 1 + groups round trips.
 */
export async function readQueues(queues: QueueService): Promise<QueuesReading> {
  const names = await queues.listQueues();
  const shown = names.slice(0, OVERVIEW_QUEUES_MAX);
  const weighted = await Promise.all(
    shown.map(async (queue) => ({ queue, physical: (await queues.partitionLayout(queue)).physical.length })),
  );
  const readings: QueueReading[] = [];
  for (const group of packReadGroups(weighted, OVERVIEW_PHYSICAL_AT_ONCE))
    readings.push(...(await Promise.all(group.map((queue) => readQueue(queues, queue)))));
  return { queuesTotal: names.length, queues: readings };
}

async function readQueue(queues: QueueService, queue: string): Promise<QueueReading> {
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
}
