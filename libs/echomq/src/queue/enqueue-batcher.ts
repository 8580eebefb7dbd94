import { Coalescer } from '../batching/coalescer';
import type { DurableScriptContext } from '../durability/durable-context';
import { durableEnqueue } from '../durability/durable-enqueue';
import type { EchoMqError } from '../errors';
import { enqueueGroups, type EnqueueOutcome, type NewJobRecord } from '../scripts';
import { ENQUEUE_CALL_MAX_BYTES } from '../scripts/limits';
import { repeatUntilKnown } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { monotonicMs } from '../monotonic';

/** Payload bytes of one caller's jobs, exactly (what bounds a call's size on the wire). */
export function payloadBytes(records: readonly NewJobRecord[]): number {
  let bytes = 0;
  for (const record of records) bytes += Buffer.byteLength(record.data);
  return bytes;
}

/**
 * At most how many payload bytes one caller's jobs carry, without encoding them: UTF-8 takes at
 * most 3 bytes per UTF-16 unit. A bound, not a count: it decides only when merged calls stop
 * growing (a caller's own call was measured exactly before it came here), and a payload is
 * rarely large enough for the difference to split a merge.
 */
export function payloadBytesAtMost(records: readonly NewJobRecord[]): number {
  let units = 0;
  for (const record of records) units += record.data.length;
  return units * 3;
}

type GroupOutcome = EnqueueOutcome[] | EchoMqError;

/**
 * Merges the enqueue calls one queue receives while earlier ones are on the wire into
 * one enqueue script call (see Coalescer). A busy producer then pays one round trip
 * and one script run per batch instead of per job; an idle one sends at once.
 *
 * Each caller keeps its own outcome: ids are minted before the call, a caller's jobs are
 * one group of the script call (all or nothing, refused alone on a clash), and an
 * idempotency key repeated across merged calls resolves to the first job, as it would
 * one call after the other. A call whose reply is lost is repeated under the same request
 * id for up to `repeatForMs`, which returns the first outcome instead of enqueueing twice.
 *
 * With durable writes (the context's `durability`), the merged call is confirmed by WAIT
 * before any caller hears of it (see durableEnqueue): each caller resolves once the replicas
 * have its jobs, or rejects with an error naming them (NotReplicatedError, or the refusal).
 */
export class EnqueueBatcher {
  private readonly coalescer: Coalescer<readonly NewJobRecord[], EnqueueOutcome>;

  constructor(
    private readonly ctx: DurableScriptContext,
    private readonly idempotencyTtlMs: number,
    private readonly repeatForMs: number,
  ) {
    this.coalescer = new Coalescer(
      (calls) => this.send(calls),
      // 64 jobs per call and 4 calls in flight: a burst becomes several script calls,
      // so Redis runs one while this process prepares the next (64 beat 16 and 1,000).
      {
        maxBatch: 64,
        maxInFlight: 4,
        size: (records) => records.length,
        maxWeight: ENQUEUE_CALL_MAX_BYTES,
        weight: payloadBytesAtMost,
      },
    );
  }

  submit(records: readonly NewJobRecord[]): Promise<EnqueueOutcome[]> {
    return this.coalescer.submit(records);
  }

  private async send(calls: (readonly NewJobRecord[])[]): Promise<GroupOutcome[]> {
    const { ctx } = this;
    const requestId = newRequestId();
    const untilMs = monotonicMs() + this.repeatForMs;
    const write = (): Promise<GroupOutcome[]> =>
      repeatUntilKnown(() => enqueueGroups(ctx, calls, this.idempotencyTtlMs, requestId), {
        untilMs,
        // Unreachable Redis: the call was never sent and already waited its deadline.
        retryUnavailable: false,
      });
    if (!ctx.durability) return write();
    // Each written group hears of its own jobs; a refused group wrote nothing and keeps its error.
    return durableEnqueue(ctx, ctx.durability, requestId, write, untilMs, (groups, errorFor) =>
      groups.map((group) => (group instanceof Error ? group : errorFor(group.map((outcome) => outcome.id)))),
    );
  }
}
