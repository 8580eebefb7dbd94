import type { HistoryPoint } from './overview.types';

/** How far back the charts reach. */
export const HISTORY_SPAN_MS = 15 * 60_000;
/** The narrowest history point: 60 points over 15 minutes, whatever the refresh interval. */
export const BUCKET_MIN_MS = 15_000;

/** The transition counters the charts show (fields of the queue's metrics hash). */
const TRACKED = ['enqueued', 'completed', 'failed', 'dead'] as const;
type Tracked = Record<(typeof TRACKED)[number], number>;
type Bucket = { startMs: number } & Tracked;

function pick(counters: Readonly<Record<string, number>>): Tracked {
  const out = { enqueued: 0, completed: 0, failed: 0, dead: 0 };
  for (const field of TRACKED) {
    const value = counters[field];
    if (Number.isFinite(value) && value > 0) out[field] = value;
  }
  return out;
}

/**
 * One queue's throughput history: the deltas of its Redis transition counters between
 * consecutive samples, summed into fixed buckets of wall time. The counters are cluster-wide
 * totals kept by the scripts, so every api process draws the same curve whoever did the work.
 *
 * - The first sample, and the first after a pause in sampling longer than `gapMs` (nobody
 *   watched), only sets the baseline: what happened unwatched is not spread into one bucket.
 * - A counter that went down was reset (the queue was obliterated): it counts from zero.
 * - Memory is bounded: buckets older than HISTORY_SPAN_MS are dropped at each sample.
 */
export class CounterHistory {
  private buckets: Bucket[] = [];
  private last?: { counters: Tracked; monoMs: number };

  constructor(
    private readonly bucketMs: number,
    private readonly gapMs: number,
  ) {}

  /** Records one sample: the counters read at wall time `atMs` (monotonic `monoMs`). */
  record(counters: Readonly<Record<string, number>>, atMs: number, monoMs: number): void {
    const current = pick(counters);
    const previous = this.last;
    this.last = { counters: current, monoMs };
    this.buckets = this.buckets.filter((bucket) => bucket.startMs + this.bucketMs > atMs - HISTORY_SPAN_MS);
    if (!previous || monoMs - previous.monoMs > this.gapMs) return;
    const bucket = this.bucketAt(atMs);
    for (const field of TRACKED) {
      const now = current[field];
      const before = previous.counters[field];
      bucket[field] += now >= before ? now - before : now;
    }
  }

  points(): HistoryPoint[] {
    return this.buckets.map(({ startMs, enqueued, completed, failed, dead }) => ({
      at: new Date(startMs).toISOString(),
      enqueued,
      completed,
      failed,
      dead,
    }));
  }

  private bucketAt(atMs: number): Bucket {
    const startMs = Math.floor(atMs / this.bucketMs) * this.bucketMs;
    const newest = this.buckets[this.buckets.length - 1];
    // A wall clock that stepped back adds to the newest bucket rather than reorder the list.
    if (newest && newest.startMs >= startMs) return newest;
    const bucket: Bucket = { startMs, enqueued: 0, completed: 0, failed: 0, dead: 0 };
    this.buckets.push(bucket);
    return bucket;
  }
}
