import type { ClaimedJobRecord } from '../scripts/claim';

/** How a worker's settlement of one claimed job ended, once Redis answered (or did not). */
export type SettledOutcome =
  | 'completed'
  /** The handler threw and the job went back to schedule or pending for another attempt. */
  | 'retried'
  | 'dead'
  /** Redis refused the outcome: the lease had been lost (the fencing token moved on). */
  | 'stale'
  | 'throttled'
  /** Given back at shutdown, its attempt unspent. */
  | 'released'
  /** Every try of the settlement failed on transient errors: Redis may or may not have it. */
  | 'unknown';

/** The settlement call a worker makes for one job: the verb of its transition. */
export type SettleVerb = 'complete' | 'fail' | 'throttle' | 'release';

/**
 * What the worker runtime tells its observers (metrics, tracing) about its own work. Every
 * method is optional. The runtime calls them through RuntimeHooksRegistry, which isolates
 * each observer: one that throws is logged and neither the job nor the other observers see it.
 */
export interface RuntimeHooks {
  /**
   * A claim call returned: `jobs` (possibly none) after `roundTripMs` from its first send
   * (repeats included); `sentAtEpochMs` is the local wall time of that send, for span starts.
   */
  claimed?(
    queue: string,
    jobs: readonly ClaimedJobRecord[],
    roundTripMs: number,
    sentAtEpochMs: number,
  ): void;
  /**
   * Wraps one handler call. Must call `run` exactly once and return what it resolves to (or
   * reject with what it rejects with): tracing runs it inside a span, metrics times it.
   */
  aroundHandler?<T>(queue: string, record: ClaimedJobRecord, run: () => Promise<T>): Promise<T>;
  /** Wraps one settlement call (complete, fail, throttle, release) of one job, as aroundHandler. */
  aroundSettle?<T>(
    queue: string,
    record: ClaimedJobRecord,
    verb: SettleVerb,
    run: () => Promise<T>,
  ): Promise<T>;
  /** The job's settlement ended so; `handlerMs` is how long its handler ran (absent when it never ran). */
  settled?(queue: string, record: ClaimedJobRecord, outcome: SettledOutcome, handlerMs?: number): void;
  /** One reap call of this process's reaper took expired leases back: `toPending` to pending, `toDead` to dead. */
  reaped?(queue: string, toPending: number, toDead: number): void;
}
