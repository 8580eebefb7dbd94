import type { ClaimedJobRecord } from '../scripts/claim';
import type { SettledOutcome, SettleVerb } from '../observability/runtime-hooks';
import type { RuntimeObserver } from './runtime-observer';

/**
 * The observer of a loop that claims from one partition of `queue`: every call names the queue
 * itself, whatever physical queue the loop passes, so metrics and traces count a partitioned
 * queue as the one queue users name (its partitions show in logs and in health).
 */
export function observedAs(queue: string, observer: RuntimeObserver): RuntimeObserver {
  return {
    claimed: (_physical: string, jobs: readonly ClaimedJobRecord[], roundTripMs: number, sentAt: number) =>
      observer.claimed(queue, jobs, roundTripMs, sentAt),
    settled: (_physical: string, record: ClaimedJobRecord, outcome: SettledOutcome, handlerMs?: number) =>
      observer.settled(queue, record, outcome, handlerMs),
    aroundHandler: <T>(_physical: string, record: ClaimedJobRecord, run: () => Promise<T>) =>
      observer.aroundHandler(queue, record, run),
    aroundSettle: <T>(_physical: string, record: ClaimedJobRecord, verb: SettleVerb, run: () => Promise<T>) =>
      observer.aroundSettle(queue, record, verb, run),
  };
}
