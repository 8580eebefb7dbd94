import type { Command } from 'commander';
import { isValidQueueName } from '../../keyspace';
import type { QueueCounts } from '../../queue/reads';
import type { QueueService } from '../../queue/queue.service';
import type { LaneView } from '../../scripts/lane-reads';
import { count } from '../format';
import type { Colors, Output } from '../io';
import { requireKnownQueue } from '../known-queue';
import { partitionRows, type PartitionStats } from '../partition-rows';
import { act, type RunState } from '../session';

export interface QueueStats {
  readonly queue: string;
  readonly counts: QueueCounts;
  readonly paused: boolean;
  /** Every lane with work, held back, paused or with settings of its own. */
  readonly lanes: LaneView[];
  /** The transition counters (enqueued, completed, failed, dead, reaped, ...). */
  readonly metrics: Record<string, number>;
  /**
   * Of a partitioned queue named alone: each of its physical queues. The fields above are the
   * queue's totals over all of them.
   */
  readonly partitions?: PartitionStats[];
}

/** A queue's stats; with `perPartition`, a partitioned queue's physical queues too. */
async function statsOf(queues: QueueService, queue: string, perPartition: boolean): Promise<QueueStats> {
  const layout = perPartition ? await queues.partitionLayout(queue) : undefined;
  const [counts, paused, lanes, metrics, partitions] = await Promise.all([
    queues.counts(queue),
    queues.isPaused(queue),
    queues.lanes(queue),
    queues.metrics(queue),
    layout?.partitioned ? partitionRows(queues, layout) : undefined,
  ]);
  return { queue, counts, paused, lanes, metrics, ...(partitions ? { partitions } : {}) };
}

/** How a queue's or a partition's row begins: its name, its four depths (dead in red when any), its pause. */
function depthCells(c: Colors, { queue, counts, paused }: QueueStats | PartitionStats): string[] {
  return [
    queue,
    count(counts.pending),
    count(counts.active),
    count(counts.schedule),
    counts.dead > 0 ? c.red(count(counts.dead)) : '0',
    paused ? c.yellow('paused') : 'no',
  ];
}

function renderPartitions(out: Output, partitions: readonly PartitionStats[]): string {
  const c = out.colors;
  return out.table(
    ['partition', 'pending', 'active', 'schedule', 'dead', 'paused', 'new jobs'],
    partitions.map((p) => [...depthCells(c, p), p.draining ? c.dim('no (draining)') : 'yes']),
    { right: [1, 2, 3, 4] },
  );
}

function render(out: Output, stats: readonly QueueStats[], one: boolean, skipped: readonly string[]): string {
  const c = out.colors;
  const note =
    skipped.length === 0
      ? []
      : [
          c.dim(
            `Skipped registry entries that are no queue name: ${skipped.map((name) => JSON.stringify(name)).join(', ')}`,
          ),
        ];
  if (stats.length === 0) return [c.dim('No queues are known under this key prefix.'), ...note].join('\n');
  const parts = [
    out.table(
      ['queue', 'pending', 'active', 'schedule', 'dead', 'paused'],
      stats.map((s) => depthCells(c, s)),
      { right: [1, 2, 3, 4] },
    ),
  ];
  if (!one) return [...parts, ...note].join('\n');
  const [only] = stats;
  if (only.partitions) parts.push(renderPartitions(out, only.partitions));
  if (only.lanes.length > 0) {
    parts.push(
      out.table(
        ['lane', 'pending', 'active', 'paused', 'held', 'weight', 'concurrency'],
        only.lanes.map((lane) => [
          lane.lane,
          count(lane.pending),
          count(lane.active),
          lane.paused ? c.yellow('paused') : 'no',
          lane.held ? 'held' : 'no',
          String(lane.weight),
          lane.concurrency === null ? '' : String(lane.concurrency),
        ]),
        { right: [1, 2, 5, 6] },
      ),
    );
  }
  const counters = Object.entries(only.metrics).sort(([a], [b]) => (a < b ? -1 : 1));
  if (counters.length > 0) {
    parts.push(
      out.table(
        ['counter', 'total'],
        counters.map(([name, n]) => [name, count(n)]),
        { right: [1] },
      ),
    );
  }
  return parts.join('\n');
}

/**
 * `emq stats [queue]`: depths, pause, lanes and counters, of one queue or of every known one; a
 * partitioned queue shows its totals, and when named alone, a line per partition under them.
 */
export function statsCommand(program: Command, state: RunState): void {
  program
    .command('stats')
    .description(
      'depth of each set, paused state, lanes and counters of a queue (every known queue if omitted); ' +
        'a partitioned queue: its totals, and a line per partition',
    )
    .argument('[queue]', 'a queue name, or one partition (emails#2)')
    .action(
      act(state, async ({ queues, out }, queue: string | undefined) => {
        if (queue !== undefined) await requireKnownQueue(queues, queue);
        // The queue named was checked (a partition's own name is one too); the registry's are not.
        const registered = queue === undefined ? await queues.listQueues() : [];
        // A registry entry that is no queue name (written by hand) names no keys: it is left out.
        const names = queue === undefined ? registered.filter((name) => isValidQueueName(name)) : [queue];
        const skipped = registered.filter((name) => !isValidQueueName(name));
        const stats: QueueStats[] = [];
        for (const name of names) stats.push(await statsOf(queues, name, queue !== undefined));
        out.result({ queues: stats, ...(skipped.length > 0 ? { skipped } : {}) }, () =>
          render(out, stats, queue !== undefined, skipped),
        );
      }),
    );
}
