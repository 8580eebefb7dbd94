import type { QueueService } from '@app/echomq';
import type { LedgerBook } from './ledger';

/** What became of the acknowledged jobs, by the ledger and (for the ones it cannot settle) by Redis. */
export interface Outcome {
  readonly acked: number;
  /** Acked ids the ledger saw completed at least once. */
  readonly completed: number;
  /** Acked ids with no completion line whose row Redis keeps as completed (the line died with its worker). */
  readonly completedUnlogged: number;
  /** Acked ids gone from Redis without a completion: lost. */
  readonly lost: string[];
  /** Acked ids still pending, active or scheduled when the scenario ended. */
  readonly stuck: string[];
  /** Acked ids in dead. */
  readonly dead: string[];
  /** Ids completed more than once (any tokens). */
  readonly completedTwice: string[];
  /** Ids completed twice by holders of the same token (the same attempt): never allowed. */
  readonly sameTokenTwice: string[];
  /** Handler runs beyond the first, over every job. */
  readonly extraRuns: number;
  /** Jobs with more than one handler run. */
  readonly rerunJobs: number;
  /** Completions Redis refused as stale (the worker's lease had been lost). */
  readonly staleCompletions: number;
}

/** Folds the ledger against the queue; reads Redis only for the acked ids the ledger never saw complete. */
export async function judge(book: LedgerBook, queues: QueueService, queue: string): Promise<Outcome> {
  const lost: string[] = [];
  const stuck: string[] = [];
  const dead: string[] = [];
  let completed = 0;
  let completedUnlogged = 0;
  for (const id of book.acked.keys()) {
    if (book.done.has(id)) {
      completed += 1;
      continue;
    }
    const job = await queues.getJob(queue, id);
    const state = job?.state;
    if (state === 'completed') completedUnlogged += 1;
    else if (state === 'dead') dead.push(id);
    else if (state === 'pending' || state === 'active' || state === 'schedule') stuck.push(id);
    else lost.push(id);
  }
  const completedTwice: string[] = [];
  const sameTokenTwice: string[] = [];
  for (const [id, attempts] of book.done) {
    if (attempts.length < 2) continue;
    completedTwice.push(id);
    if (new Set(attempts).size < attempts.length) sameTokenTwice.push(id);
  }
  let extraRuns = 0;
  let rerunJobs = 0;
  for (const runs of book.runs.values()) {
    if (runs.length > 1) {
      extraRuns += runs.length - 1;
      rerunJobs += 1;
    }
  }
  return {
    acked: book.acked.size,
    completed,
    completedUnlogged,
    lost,
    stuck,
    dead,
    completedTwice,
    sameTokenTwice,
    extraRuns,
    rerunJobs,
    staleCompletions: book.stale,
  };
}

/** The figures every scenario prints about its jobs. */
export function outcomeFigures(outcome: Outcome): Record<string, number> {
  return {
    acked: outcome.acked,
    completed: outcome.completed + outcome.completedUnlogged,
    lost: outcome.lost.length,
    stuck: outcome.stuck.length,
    dead: outcome.dead.length,
    completedTwice: outcome.completedTwice.length,
    sameTokenTwice: outcome.sameTokenTwice.length,
    extraRuns: outcome.extraRuns,
  };
}

/** The promises every job-running scenario checks: nothing lost or stuck, nothing completed twice. */
export function basicPromises(outcome: Outcome, { deadExpected = 0 } = {}): string[] {
  const broken: string[] = [];
  const sample = (ids: readonly string[]): string => ids.slice(0, 3).join(', ');
  if (outcome.lost.length > 0)
    broken.push(`${outcome.lost.length} acknowledged jobs lost (${sample(outcome.lost)})`);
  if (outcome.stuck.length > 0) broken.push(`${outcome.stuck.length} jobs stuck (${sample(outcome.stuck)})`);
  if (outcome.dead.length !== deadExpected)
    broken.push(`${outcome.dead.length} jobs dead, expected ${deadExpected} (${sample(outcome.dead)})`);
  if (outcome.completedTwice.length > 0)
    broken.push(`${outcome.completedTwice.length} jobs completed twice (${sample(outcome.completedTwice)})`);
  if (outcome.sameTokenTwice.length > 0)
    broken.push(
      `${outcome.sameTokenTwice.length} jobs completed twice under one token (${sample(outcome.sameTokenTwice)})`,
    );
  return broken;
}

/**
 * Waits until no acked job is waiting or running: the queue's pending, active and schedule
 * sets are empty, or `timeoutMs` passed. Polls the counts (one call) every `everyMs`: this is
 * the orchestrator watching a system under fault, where no event can be trusted to arrive.
 */
export async function settle(
  queues: QueueService,
  queue: string,
  timeoutMs: number,
  everyMs = 250,
): Promise<{ settled: boolean; waitedMs: number }> {
  const started = Date.now();
  for (;;) {
    try {
      const counts = await queues.counts(queue);
      if (counts.pending + counts.active + counts.schedule === 0)
        return { settled: true, waitedMs: Date.now() - started };
    } catch {
      // Redis may be mid-fault; the deadline below still ends the wait.
    }
    if (Date.now() - started > timeoutMs) return { settled: false, waitedMs: Date.now() - started };
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
