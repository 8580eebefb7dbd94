import type { LedgerBook, LedgerLine } from './ledger';

/**
 * Reads of the ledger by time, for the network scenario: how fast jobs completed before the
 * faults and after them, and how soon each worker process completed a job again once the
 * network was healed (a worker that never does is wedged). Times are the writing process's
 * own clock, which is the orchestrator's here (no clock offsets in this scenario).
 */

/** Completions recorded in [from, to), per second. */
export function completionsPerSecond(lines: readonly LedgerLine[], from: number, to: number): number {
  if (to <= from) return 0;
  const done = lines.filter((line) => line.kind === 'done' && line.at >= from && line.at < to).length;
  return Math.round(done / ((to - from) / 1000));
}

/** For each worker pid, ms from `since` to its first completion at or after it; undefined for none. */
export function recoveryByWorker(
  lines: readonly LedgerLine[],
  pids: readonly number[],
  since: number,
): Map<number, number | undefined> {
  const first = new Map<number, number | undefined>(pids.map((pid) => [pid, undefined]));
  for (const line of lines) {
    if (line.kind !== 'done' || line.at < since || !first.has(line.pid)) continue;
    const seen = first.get(line.pid);
    if (seen === undefined || line.at - since < seen) first.set(line.pid, line.at - since);
  }
  return first;
}

/**
 * Idempotency keys that made more than one job: each producer acknowledges its sequence
 * numbers, and one logical job must have one id however often its enqueue was repeated.
 */
export function keysWithTwoJobs(book: LedgerBook): { readonly keys: number; readonly duplicates: number } {
  const ids = new Map<string, Set<string>>();
  for (const [id, { seq, pid }] of book.acked) {
    const key = `${pid}:${seq}`;
    const set = ids.get(key) ?? new Set<string>();
    set.add(id);
    ids.set(key, set);
  }
  let duplicates = 0;
  for (const set of ids.values()) if (set.size > 1) duplicates += set.size - 1;
  return { keys: ids.size, duplicates };
}
