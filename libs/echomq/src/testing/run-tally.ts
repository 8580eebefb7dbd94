import type { JobId } from '../ids';
import type { WorkerEventEmitter, WorkerEvents } from '../worker/job-runner';

/** One outcome a run saw, once Redis had recorded it. */
export type RunOutcome<R = unknown> =
  | { readonly id: JobId; readonly outcome: 'completed'; readonly result: R }
  | {
      readonly id: JobId;
      readonly outcome: 'failed';
      readonly error: unknown;
      /** Where the job went: schedule (a retry after its backoff), pending, or dead (no retry left). */
      readonly movedTo: WorkerEvents['failed'][2];
    }
  | { readonly id: JobId; readonly outcome: 'stale'; readonly attempt: number }
  | {
      readonly id: JobId;
      readonly outcome: 'throttled';
      /** How long the queue or lane was held back. */
      readonly retryAfterMs: number;
      /** What was held back: the whole queue, or the job's lane. */
      readonly scope: WorkerEvents['throttled'][2];
    };

/** What one runUntilIdle call did, counted from this application's processor's outcomes. */
export interface RunSummary<R = unknown> {
  /** Jobs completed. */
  readonly completed: number;
  /** Failed attempts: a job that failed twice and then completed counts 2 here and 1 in completed. */
  readonly failed: number;
  /** Jobs that went to dead (their attempts ran out, or an UnrecoverableError); counted in failed too. */
  readonly dead: number;
  /** Attempts that finished after their lease was lost; Redis kept the newer claim's outcome. */
  readonly stale: number;
  /**
   * Attempts that threw a RateLimitedError: each put its job back in pending with the attempt
   * unspent (so a job throttled once and then completed counts 1 here and 1 in completed).
   */
  readonly throttled: number;
  /** Jobs left in schedule at the end (delayed, or waiting out a backoff); 0 with includeDelayed. */
  readonly scheduled: number;
  /** Every outcome, in the order they were recorded. */
  readonly outcomes: readonly RunOutcome<R>[];
}

/** Collects one run's outcomes from a claim loop's events, and wakes the run when one arrives. */
export class RunTally<R> {
  private readonly outcomes: RunOutcome<R>[] = [];
  private wake?: () => void;
  private readonly onCompleted = (id: string, result: unknown): void =>
    this.add({ id: id as JobId, outcome: 'completed', result: result as R });
  private readonly onFailed = (id: string, error: unknown, movedTo: WorkerEvents['failed'][2]): void =>
    this.add({ id: id as JobId, outcome: 'failed', error, movedTo });
  private readonly onStale = (id: string, attempt: number): void =>
    this.add({ id: id as JobId, outcome: 'stale', attempt });
  private readonly onThrottled = (id: string, retryAfterMs: number, scope: 'queue' | 'lane'): void =>
    this.add({ id: id as JobId, outcome: 'throttled', retryAfterMs, scope });

  constructor(private readonly events: WorkerEventEmitter) {
    events.on('completed', this.onCompleted);
    events.on('failed', this.onFailed);
    events.on('stale', this.onStale);
    events.on('throttled', this.onThrottled);
  }

  detach(): void {
    this.events.off('completed', this.onCompleted);
    this.events.off('failed', this.onFailed);
    this.events.off('stale', this.onStale);
    this.events.off('throttled', this.onThrottled);
    this.wake?.();
  }

  /** Ids of the jobs this run completed. */
  completedIds(): JobId[] {
    return this.outcomes.flatMap((outcome) => (outcome.outcome === 'completed' ? [outcome.id] : []));
  }

  /** Resolves after the next outcome (once the loop has finished its bookkeeping for it), or after ms. */
  next(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      // The loop marks the job settled right after emitting: check again on the next turn.
      this.wake = () => {
        this.wake = undefined;
        setImmediate(done);
      };
    });
  }

  summary(scheduled: number): RunSummary<R> {
    const count = (test: (outcome: RunOutcome<R>) => boolean): number => this.outcomes.filter(test).length;
    return {
      completed: count((outcome) => outcome.outcome === 'completed'),
      failed: count((outcome) => outcome.outcome === 'failed'),
      dead: count((outcome) => outcome.outcome === 'failed' && outcome.movedTo === 'dead'),
      stale: count((outcome) => outcome.outcome === 'stale'),
      throttled: count((outcome) => outcome.outcome === 'throttled'),
      scheduled,
      outcomes: [...this.outcomes],
    };
  }

  private add(outcome: RunOutcome<R>): void {
    this.outcomes.push(outcome);
    this.wake?.();
  }
}
