import { completeJobs, type Completion, type ScriptContext } from '../scripts';

/** Most completions sent in one script call. */
const BATCH_MAX = 500;

interface PendingCompletion {
  readonly completion: Completion;
  readonly resolve: (completed: boolean) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Batches one claim loop's completions: every job that finishes in the same turn of
 * the event loop is completed by a single script call, which turns one round trip
 * and one script per job into one per batch under load, and costs nothing when idle
 * (a lone completion goes out on the next turn).
 */
export class Completer {
  private waiting: PendingCompletion[] = [];
  private scheduled = false;

  constructor(
    private readonly ctx: ScriptContext,
    private readonly keepMs: number,
  ) {}

  /** Resolves true when completed, false when the claim was stale (nothing changed). */
  complete(completion: Completion): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ completion, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const all = this.waiting;
    this.waiting = [];
    for (let from = 0; from < all.length; from += BATCH_MAX) {
      void this.send(all.slice(from, from + BATCH_MAX));
    }
  }

  private async send(batch: PendingCompletion[]): Promise<void> {
    try {
      const completed = await completeJobs(
        this.ctx,
        batch.map((entry) => entry.completion),
        this.keepMs,
      );
      batch.forEach((entry, index) => entry.resolve(completed[index]));
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    }
  }
}
