import type { LedgerLine } from './ledger';

/**
 * Facts the Redis-fault scenarios read off the raw ledger lines (the folded book keeps one ack
 * per id, so it cannot show an id handed out twice).
 */

/**
 * Ids an enqueue returned for two different logical jobs (another producer, or another sequence
 * number of the same one). Never allowed: the node lease must keep ids unique even across a
 * Redis that lost writes (docs/model.md, "Why ids are unique").
 */
export function idsAckedTwice(lines: readonly LedgerLine[]): string[] {
  const owners = new Map<string, Set<string>>();
  for (const line of lines) {
    if (line.kind !== 'ack') continue;
    const owner = `${line.pid}:${line.n}`;
    const set = owners.get(line.id);
    if (set) set.add(owner);
    else owners.set(line.id, new Set([owner]));
  }
  return [...owners].filter(([, set]) => set.size > 1).map(([id]) => id);
}

/** The first line of a kind written at or after `fromMs` (the writers' clock), or undefined. */
export function firstAfter(
  lines: readonly LedgerLine[],
  kind: LedgerLine['kind'],
  fromMs: number,
): LedgerLine | undefined {
  let first: LedgerLine | undefined;
  for (const line of lines) {
    if (line.kind === kind && line.at >= fromMs && (first === undefined || line.at < first.at)) first = line;
  }
  return first;
}

/** Lines of a kind written in [fromMs, toMs). */
export function countBetween(
  lines: readonly LedgerLine[],
  kind: LedgerLine['kind'],
  fromMs: number,
  toMs: number,
): number {
  let count = 0;
  for (const line of lines) if (line.kind === kind && line.at >= fromMs && line.at < toMs) count += 1;
  return count;
}
