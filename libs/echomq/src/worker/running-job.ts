import { JobAbortedError } from '../errors';
import type { ClaimedJobRecord, ClaimRef } from '../scripts';

/** One claimed job while this process holds it: its claim, its abort switch, its lease as seen locally. */
export class RunningJob {
  readonly controller = new AbortController();
  readonly claim: ClaimRef;
  /**
   * Local-clock estimate of when the lease runs out: the time the last successful
   * claim / extend was sent plus the lease. If heartbeats cannot reach Redis past
   * this point, the lease must be presumed lost.
   */
  leaseValidUntil: number;

  constructor(
    readonly record: ClaimedJobRecord,
    sentAt: number,
    leaseMs: number,
  ) {
    this.claim = { id: record.id, attempt: record.attempt, claimant: record.claimant };
    this.leaseValidUntil = sentAt + leaseMs;
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  abort(reason: JobAbortedError['reason'], message: string): void {
    if (!this.aborted) this.controller.abort(new JobAbortedError(this.record.id, reason, message));
  }
}
