import { JobAbortedError } from '../errors';
import type { ClaimedJobRecord, ClaimRef } from '../scripts';

/** One claimed job while this process holds it: its claim, its abort switch, its lease as seen locally. */
export class RunningJob {
  /** Created when the handler first reads job.signal: most handlers never do, and it is not free. */
  private controller?: AbortController;
  private abortReason?: JobAbortedError;
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
    return this.abortReason !== undefined;
  }

  /** Why the job was aborted, if it was. */
  get reason(): JobAbortedError | undefined {
    return this.abortReason;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.abortReason) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  abort(reason: JobAbortedError['reason'], message: string): void {
    if (this.abortReason) return;
    this.abortReason = new JobAbortedError(this.record.id, reason, message);
    this.controller?.abort(this.abortReason);
  }
}
