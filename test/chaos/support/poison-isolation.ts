import type { LedgerLine } from './ledger';

/** What the ledger says about the jobs that were running when a worker process died. */
export interface CrashCompany {
  /**
   * Runs of a poison job after its first (it was a crash suspect then) in a process where
   * another handler was running too: each should have run alone.
   */
  readonly poisonRunsNotAlone: number;
  /** Ordinary handler runs cut short by a dying process. */
  readonly othersCaught: number;
  /**
   * The highest attempt (fencing token) an ordinary job completed on: 2 at most when each one
   * is caught by at most one death (its claim by the dying process, then its own run alone).
   */
  readonly othersMaxAttempt: number;
}

/**
 * From the raw ledger: a handler run in a process that exited, whose attempt no process
 * reported completed, was running when that process died (the poison job SIGKILLs its process
 * as its handler starts).
 */
export function crashCompany(
  lines: readonly LedgerLine[],
  exits: readonly number[],
  poisonIds: readonly string[],
): CrashCompany {
  const exited = new Set(exits);
  const done = new Set(lines.filter((line) => line.kind === 'done').map((line) => `${line.id}@${line.n}`));
  const dying = new Map<number, { id: string; attempt: number }[]>();
  for (const line of lines) {
    if (line.kind !== 'run' || !exited.has(line.pid) || done.has(`${line.id}@${line.n}`)) continue;
    const runs = dying.get(line.pid) ?? [];
    runs.push({ id: line.id, attempt: line.n });
    dying.set(line.pid, runs);
  }
  const poison = new Set(poisonIds);
  let poisonRunsNotAlone = 0;
  const caught = new Map<string, number>();
  for (const runs of dying.values()) {
    for (const run of runs) {
      if (!poison.has(run.id)) caught.set(run.id, (caught.get(run.id) ?? 0) + 1);
    }
  }
  for (const id of poisonIds) {
    const first = Math.min(
      ...lines.filter((line) => line.kind === 'run' && line.id === id).map((line) => line.n),
    );
    for (const [, runs] of dying) {
      const mine = runs.find((run) => run.id === id);
      if (mine && mine.attempt > first && runs.length > 1) poisonRunsNotAlone += 1;
    }
  }
  let othersMaxAttempt = 0;
  for (const line of lines) {
    if (line.kind === 'done' && !poison.has(line.id)) othersMaxAttempt = Math.max(othersMaxAttempt, line.n);
  }
  return {
    poisonRunsNotAlone,
    othersCaught: [...caught.values()].reduce((sum, n) => sum + n, 0),
    othersMaxAttempt,
  };
}
