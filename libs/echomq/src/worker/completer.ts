import { Coalescer } from '../batching/coalescer';
import { completeJobs, type Completion, type ScriptContext } from '../scripts';

/**
 * Batches one claim loop's completions (see Coalescer): a job that finishes while
 * others' completions are on the wire leaves with the next batch, so under load one
 * script call completes many jobs, and an idle loop completes a job at once.
 */
export class Completer {
  private readonly coalescer: Coalescer<Completion, boolean>;

  constructor(ctx: ScriptContext, keepMs: number) {
    this.coalescer = new Coalescer(
      async (completions) => (await completeJobs(ctx, completions, keepMs)).map((completed) => [completed]),
      { maxBatch: 500, maxInFlight: 2, size: () => 1 },
    );
  }

  /** Resolves true when completed, false when the claim was stale (nothing changed). */
  async complete(completion: Completion): Promise<boolean> {
    const [completed] = await this.coalescer.submit(completion);
    return completed;
  }
}
