// @ts-check
/**
 * What the charts say, worked out from a queue's history: the server's per-bucket deltas of
 * the Redis transition counters (enqueued, completed, failed, dead), oldest first, each bucket
 * named by the instant it starts; the newest is still filling as of the overview's `at`.
 */

/** @typedef {{ at: string, enqueued: number, completed: number, failed: number, dead: number }} Sample */

/** How far back the charts reach (the server keeps about this much). */
export const SPAN_MS = 15 * 60_000;
/** The figure beside a chart covers the buckets of about the last minute. */
const RECENT_MS = 60_000;

/**
 * The time one bucket stands for: the narrowest gap between two buckets (buckets are fixed
 * slices of time; a wider gap is a stretch nobody watched). With one bucket there is no gap to
 * read: it is drawn a sixtieth of the span wide (or one refresh, if wider), so it can be seen;
 * that guess only sets how wide the bar is.
 * @param {Sample[]} history
 * @param {number} refreshMs
 */
export function bucketWidth(history, refreshMs) {
  let narrowest = Infinity;
  for (let i = 1; i < history.length; i++) {
    const gap =
      Date.parse(/** @type {Sample} */ (history[i]).at) -
      Date.parse(/** @type {Sample} */ (history[i - 1]).at);
    if (gap > 0 && gap < narrowest) narrowest = gap;
  }
  return Number.isFinite(narrowest) ? narrowest : Math.max(refreshMs, SPAN_MS / 60);
}

/** @param {Sample} sample */
function failures(sample) {
  return sample.failed + sample.dead;
}

/** @param {Sample} sample */
function finished(sample) {
  return sample.completed + sample.failed + sample.dead;
}

/**
 * Everything the two charts of a queue draw and say.
 * @param {Sample[]} history
 * @param {{ at: string, refreshMs: number, bucketMs?: number }} overview the sample's time, and
 *   the bucket width when the server says it (else read from the history)
 */
export function chartData(history, overview) {
  const atMs = Date.parse(overview.at);
  const bucketMs = overview.bucketMs ?? bucketWidth(history, overview.refreshMs);
  const oldest = history[0] ? Date.parse(history[0].at) : atMs;
  const fromMs = Math.min(atMs - SPAN_MS, oldest);
  const recent = history.filter((sample) => Date.parse(sample.at) >= atMs - RECENT_MS);
  const since = recent[0] ? Date.parse(recent[0].at) : atMs;
  const seconds = Math.max(1, atMs - since) / 1000;
  const completedRecently = recent.reduce((sum, sample) => sum + sample.completed, 0);
  const failedRecently = recent.reduce((sum, sample) => sum + failures(sample), 0);
  const finishedRecently = recent.reduce((sum, sample) => sum + finished(sample), 0);
  return {
    fromMs,
    toMs: atMs,
    bucketMs,
    completed: history.map((sample) => ({ startMs: Date.parse(sample.at), value: sample.completed })),
    failureShare: history.map((sample) => ({
      startMs: Date.parse(sample.at),
      value: finished(sample) > 0 ? failures(sample) / finished(sample) : 0,
    })),
    /** Completions per second over about the last minute. */
    recentRate: completedRecently / seconds,
    /** Failed and dead over every finished attempt, about the last minute; null when none finished. */
    recentFailureShare: finishedRecently > 0 ? failedRecently / finishedRecently : null,
    totalCompleted: history.reduce((sum, sample) => sum + sample.completed, 0),
    totalFailed: history.reduce((sum, sample) => sum + failures(sample), 0),
  };
}

/**
 * A short mark of a history that changes whenever any of it does: between samples only the
 * newest bucket changes and old ones fall off the front, so its length, its first bucket and its
 * newest one tell (cheaper than serialising every bucket at each sample).
 * @param {Sample[]} history
 */
export function historyMark(history) {
  const first = history[0];
  const last = history[history.length - 1];
  return `${history.length}|${first?.at ?? ''}|${last ? JSON.stringify(last) : ''}`;
}
