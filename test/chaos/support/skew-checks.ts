import type { LedgerLine } from './ledger';
import type { SkewProducerReport } from './skew-config';
import {
  fifoInversions,
  idTimeMs,
  onServerClock,
  realAt,
  type EventClock,
  type Enqueued,
} from './skew-clocks';

/** One producer of the clock-skew scenario: its offset, how it gets node numbers, what it did. */
export interface SkewProducer {
  readonly label: string;
  readonly offsetMs: number;
  /** true: node leased from Redis (ids on server time); false: a configured nodeId (its own clock). */
  readonly leased: boolean;
  readonly report: SkewProducerReport;
}

/** Everything the checks read. */
export interface SkewFacts {
  readonly runs: ReadonlyMap<string, LedgerLine[]>;
  readonly offsets: ReadonlyMap<number, number>;
  readonly events: EventClock;
}

/** Handler runs per id (their ledger lines), each list in attempt order. */
export function runsById(lines: readonly LedgerLine[]): Map<string, LedgerLine[]> {
  const runs = new Map<string, LedgerLine[]>();
  for (const line of lines) {
    if (line.kind !== 'run') continue;
    const list = runs.get(line.id);
    if (list) list.push(line);
    else runs.set(line.id, [line]);
  }
  for (const list of runs.values()) list.sort((a, b) => a.n - b.n);
  return runs;
}

/**
 * For each fail-once job: real time from the server's 'failed' entry to the start of the second
 * run. On server time it is at least the backoff; a retry timed by a skewed worker's clock would
 * run at once (clock behind) or minutes late (clock ahead).
 */
export function retryWaits(ids: readonly string[], facts: SkewFacts): number[] {
  return ids.flatMap((id) => {
    const second = facts.runs.get(id)?.[1];
    const failedAt = facts.events.failedAt.get(id);
    return second && failedAt !== undefined ? [realAt(second, facts.offsets) - failedAt] : [];
  });
}

/** For each delayed job: real time from its enqueue (server time of the entry) to its run. */
export function delayWaits(ids: readonly string[], facts: SkewFacts): number[] {
  return ids.flatMap((id) => {
    const run = facts.runs.get(id)?.[0];
    const enqueuedAt = facts.events.enqueuedAt.get(id);
    return run && enqueuedAt !== undefined ? [realAt(run, facts.offsets) - enqueuedAt] : [];
  });
}

/** Waits shorter than `atLeastMs` (less a millisecond of rounding): jobs run before they were due. */
export function early(waits: readonly number[], atLeastMs: number): number {
  return waits.filter((wait) => wait < atLeastMs - 1).length;
}

/** The FIFO sample of a producer with the server time of each enqueue. */
export function enqueuedSample(producer: SkewProducer, facts: SkewFacts): Enqueued[] {
  return producer.report.fifo.flatMap((id) => {
    const atMs = facts.events.enqueuedAt.get(id);
    return atMs === undefined ? [] : [{ id, atMs }];
  });
}

/** How a producer's ids read: their mint time less the server time of their enqueue, and which clock that is. */
export function idReadings(
  producer: SkewProducer,
  facts: SkewFacts,
): { lags: number[]; onServer: number; onOwn: number } {
  const lags: number[] = [];
  let onServer = 0;
  for (const { id, atMs } of enqueuedSample(producer, facts)) {
    const minted = idTimeMs(id);
    lags.push(minted - atMs);
    if (onServerClock(minted, atMs, producer.offsetMs)) onServer += 1;
  }
  return { lags, onServer, onOwn: lags.length - onServer };
}

/** Inversions of FIFO between two producers' samples (pairs enqueued at least `marginMs` apart). */
export function inversionsBetween(
  a: SkewProducer,
  b: SkewProducer,
  facts: SkewFacts,
  marginMs: number,
): { pairs: number; inversions: number } {
  return fifoInversions(enqueuedSample(a, facts), enqueuedSample(b, facts), marginMs);
}

/**
 * A schedule's occurrences, checked against server time: the first run-at the upsert answered
 * is one interval after the upsert (on the server's clock, not the upserting process's), and
 * the k-th occurrence does not start before first run-at + k intervals.
 */
export function tickReadings(
  producer: SkewProducer,
  ticks: readonly LedgerLine[],
  everyMs: number,
  facts: SkewFacts,
): { count: number; early: number; firstRunAtOnServerClock: boolean; meanGapMs: number | string } {
  const schedule = producer.report.schedule;
  if (!schedule) return { count: 0, early: 0, firstRunAtOnServerClock: false, meanGapMs: '-' };
  const upsertedAt = schedule.upsertedAt - producer.offsetMs;
  const starts = ticks.map((line) => realAt(line, facts.offsets)).sort((x, y) => x - y);
  const earlyTicks = starts.filter((at, k) => at < schedule.nextRunAt + k * everyMs - 1).length;
  const meanGapMs =
    starts.length < 2 ? '-' : Math.round((starts[starts.length - 1] - starts[0]) / (starts.length - 1));
  return {
    count: starts.length,
    early: earlyTicks,
    firstRunAtOnServerClock: onServerClock(schedule.nextRunAt, upsertedAt + everyMs, producer.offsetMs),
    meanGapMs,
  };
}
