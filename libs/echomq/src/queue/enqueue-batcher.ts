import { Coalescer } from '../batching/coalescer';
import { enqueueJobs, type EnqueueOutcome, type NewJobRecord, type ScriptContext } from '../scripts';

/**
 * Merges the enqueue calls one queue receives while earlier ones are on the wire into
 * one enqueue script call (see Coalescer). A busy producer then pays one round trip
 * and one script run per batch instead of per job; an idle one sends at once.
 *
 * Each caller keeps its own outcome: ids are minted before the call, a call's jobs are
 * never split across script calls (so enqueueMany stays all or nothing), and an
 * idempotency key repeated across merged calls resolves to the first job, as it would
 * one call after the other. A Redis error fails every call merged into its script call.
 */
export class EnqueueBatcher {
  private readonly coalescer: Coalescer<readonly NewJobRecord[], EnqueueOutcome>;

  constructor(ctx: ScriptContext, idempotencyTtlMs: number) {
    this.coalescer = new Coalescer(
      async (calls) => {
        const outcomes = await enqueueJobs(ctx, calls.flat(), idempotencyTtlMs);
        let from = 0;
        return calls.map((records) => outcomes.slice(from, (from += records.length)));
      },
      // 64 jobs per call and 4 calls in flight: a burst becomes several script calls,
      // so Redis runs one while this process prepares the next (64 beat 16 and 1,000).
      { maxBatch: 64, maxInFlight: 4, size: (records) => records.length },
    );
  }

  submit(records: readonly NewJobRecord[]): Promise<EnqueueOutcome[]> {
    return this.coalescer.submit(records);
  }
}
