/**
 * Wall-clock time in milliseconds with sub-millisecond resolution, comparable
 * between the orchestrator and the worker processes on one machine.
 *
 * Each process estimates the offset between the system clock (Date.now(), whole
 * milliseconds) and its monotonic clock (performance.now()) at the edges of
 * Date.now() ticks: an edge seen between two performance.now() readings bounds
 * the offset to that interval. Intersecting the bounds of several edges keeps the
 * estimate tight even when the process is preempted while sampling (a preempted
 * sample only widens its own interval). Re-anchoring per run avoids the drift of
 * performance.timeOrigin in a long-lived process.
 */
const EDGES = 12;

let offset = Date.now() - performance.now();

/** Re-estimates the offset (spins for about EDGES milliseconds). */
export function anchorClock(): void {
  let lower = -Infinity;
  let upper = Infinity;
  let narrowest = { width: Infinity, mid: offset };
  let before = performance.now();
  let last = Date.now();
  for (let edges = 0; edges < EDGES;) {
    const p0 = performance.now();
    const now = Date.now();
    const p1 = performance.now();
    if (now === last + 1) {
      // The tick to `now` happened after `before` and before p1.
      const low = now - p1;
      const high = now - before;
      lower = Math.max(lower, low);
      upper = Math.min(upper, high);
      if (high - low < narrowest.width) narrowest = { width: high - low, mid: (low + high) / 2 };
      edges += 1;
    }
    if (now !== last) last = now;
    before = p0;
  }
  offset = lower <= upper ? (lower + upper) / 2 : narrowest.mid;
}

export function wallNow(): number {
  return performance.now() + offset;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves once check() is true, polling every intervalMs; rejects after timeoutMs. */
export async function waitUntil(
  check: () => boolean,
  timeoutMs: number,
  what: string,
  intervalMs = 10,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

export function formatDuration(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
