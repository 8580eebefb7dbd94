import type { QueueService } from '@app/echomq';
import { JOB_IDS } from '@app/echomq/internal';
import type { LedgerLine } from './ledger';

/**
 * The clock-skew scenario's readings. Three clocks are in play: the Redis server's (the
 * orchestrator shares its host, so its Date.now is that clock too), and each skewed child's,
 * which libfaketime puts a fixed offset away. A ledger line carries its writer's clock, so
 * subtracting the writer's offset gives real time; an event stream entry id carries the
 * server's time of the script that wrote it; an id carries its minter's idea of the time.
 */

/** Real (server) time of a ledger line: its writer's clock less that writer's offset. */
export function realAt(line: LedgerLine, offsets: ReadonlyMap<number, number>): number {
  return line.at - (offsets.get(line.pid) ?? 0);
}

/** The mint time of a job id (ms since the Unix epoch). */
export function idTimeMs(id: string): number {
  const parts = JOB_IDS.parts(id);
  if (!parts) throw new Error(`not a job id: ${id}`);
  return parts.timeMs;
}

/** Whether `readMs` is nearer to `serverMs` than to `serverMs + offsetMs` (the skewed clock's reading). */
export function onServerClock(readMs: number, serverMs: number, offsetMs: number): boolean {
  return Math.abs(readMs - serverMs) < Math.abs(readMs - (serverMs + offsetMs));
}

export interface Enqueued {
  readonly id: string;
  /** Server time of the enqueue. */
  readonly atMs: number;
}

/**
 * Pairs of jobs from two producers whose enqueues were at least `marginMs` apart (server time),
 * and how many of them the ids order the other way round: FIFO across producers is id order, so
 * an inversion is a job claimed before one enqueued earlier.
 */
export function fifoInversions(
  a: readonly Enqueued[],
  b: readonly Enqueued[],
  marginMs: number,
): { pairs: number; inversions: number } {
  let pairs = 0;
  let inversions = 0;
  for (const x of a) {
    for (const y of b) {
      if (Math.abs(x.atMs - y.atMs) < marginMs) continue;
      pairs += 1;
      if (x.atMs < y.atMs !== x.id < y.id) inversions += 1;
    }
  }
  return { pairs, inversions };
}

export function median(values: readonly number[]): number | string {
  if (values.length === 0) return '-';
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Follows a queue's event stream from the orchestrator and keeps, per job, the server time of
 * its enqueue and of its failures; and, per entry, how far its stream time was from the
 * orchestrator's clock when it arrived (on the server's clock it is a few ms behind; on a
 * skewed writer's clock it would be minutes off).
 */
export class EventClock {
  readonly enqueuedAt = new Map<string, number>();
  readonly failedAt = new Map<string, number>();
  /** Entries whose stream time was nearer a skewed clock (offset `skewMs` either way) than the server's. */
  offClock = 0;
  entries = 0;
  /** The largest arrival time less stream time seen. */
  lagMaxMs = 0;
  private unsubscribe?: () => void;

  private constructor(private readonly skewMs: number) {}

  static async follow(queues: QueueService, queue: string, skewMs: number): Promise<EventClock> {
    const clock = new EventClock(skewMs);
    clock.unsubscribe = await queues.subscribe(queue, (event) => {
      const streamMs = Number(event.streamId.split('-')[0]);
      const lag = Date.now() - streamMs;
      clock.entries += 1;
      clock.lagMaxMs = Math.max(clock.lagMaxMs, lag);
      if (Math.abs(lag) >= clock.skewMs / 2) clock.offClock += 1;
      const into =
        event.type === 'enqueued' ? clock.enqueuedAt : event.type === 'failed' ? clock.failedAt : undefined;
      if (into) for (const id of event.ids) if (!into.has(id)) into.set(id, streamMs);
    });
    return clock;
  }

  stop(): void {
    this.unsubscribe?.();
  }
}
