import type { Command } from 'commander';
import { isValidQueueName } from '../../keyspace';
import type { QueueCounts } from '../../queue/reads';
import type { QueueService } from '../../queue/queue.service';
import type { LaneView } from '../../scripts/lane-reads';
import { count } from '../format';
import type { Output } from '../io';
import { requireKnownQueue } from '../known-queue';
import { act, type RunState } from '../session';

export interface QueueStats {
  readonly queue: string;
  readonly counts: QueueCounts;
  readonly paused: boolean;
  /** Every lane with work, held back, paused or with settings of its own. */
  readonly lanes: LaneView[];
  /** The transition counters (enqueued, completed, failed, dead, reaped, ...). */
  readonly metrics: Record<string, number>;
}

async function statsOf(queues: QueueService, queue: string): Promise<QueueStats> {
  const [counts, paused, lanes, metrics] = await Promise.all([
    queues.counts(queue),
    queues.isPaused(queue),
    queues.lanes(queue),
    queues.metrics(queue),
  ]);
  return { queue, counts, paused, lanes, metrics };
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
      stats.map((s) => [
        s.queue,
        count(s.counts.pending),
        count(s.counts.active),
        count(s.counts.schedule),
        s.counts.dead > 0 ? c.red(count(s.counts.dead)) : '0',
        s.paused ? c.yellow('paused') : 'no',
      ]),
      { right: [1, 2, 3, 4] },
    ),
  ];
  if (!one) return [...parts, ...note].join('\n');
  const [only] = stats;
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

/** `emq stats [queue]`: depths, pause, lanes and counters, of one queue or of every known one. */
export function statsCommand(program: Command, state: RunState): void {
  program
    .command('stats')
    .description(
      'depth of each set, paused state, lanes and counters of a queue (every known queue if omitted)',
    )
    .argument('[queue]', 'a queue name')
    .action(
      act(state, async ({ queues, out }, queue: string | undefined) => {
        if (queue !== undefined) await requireKnownQueue(queues, queue);
        const registered = queue === undefined ? await queues.listQueues() : [queue];
        // A registry entry that is no queue name (written by hand) names no keys: it is left out.
        const names = registered.filter((name) => isValidQueueName(name));
        const skipped = registered.filter((name) => !isValidQueueName(name));
        const stats: QueueStats[] = [];
        for (const name of names) stats.push(await statsOf(queues, name));
        out.result({ queues: stats, ...(skipped.length > 0 ? { skipped } : {}) }, () =>
          render(out, stats, queue !== undefined, skipped),
        );
      }),
    );
}
