import { JobAbortedError } from '../errors';
import type { ClaimedJobRecord, ClaimRef } from '../scripts';

/** One claimed job while this process holds it: its claim, its abort switch, its lease as seen locally. */
export class RunningJob {
  /** Created when the handler first reads job.signal: most handlers never do, and it is not free. */
  private controller?: AbortController;
  private abortReason?: JobAbortedError;
  private validUntil: number;
  readonly claim: ClaimRef;
  /**
   * Set at shutdown when the loop gives this job back: resolves true once Redis recorded
   * the release (the job is back in pending), false when the release was refused or its
   * outcome never became known. Only a recorded release lets the runner skip settling.
   */
  released?: Promise<boolean>;

  constructor(
    readonly record: ClaimedJobRecord,
    sentAt: number,
    leaseMs: number,
  ) {
    this.claim = { id: record.id, attempt: record.attempt, claimant: record.claimant };
    this.validUntil = sentAt + leaseMs;
  }

  /**
   * Local-clock estimate of when the lease runs out: the latest (send time + lease) of
   * the claim and every extend Redis confirmed. The send time is before Redis read its
   * clock, so the estimate is never later than the real deadline. Past this point the
   * lease must be presumed lost, whether or not Redis can be asked.
   */
  get leaseValidUntil(): number {
    return this.validUntil;
  }

  /**
   * Records an extend Redis confirmed. Keeps the later deadline: a heartbeat (lease/3 of the
   * queue's lease) must not undo a longer one the handler asked for with job.extendLease(ms),
   * and Redis itself never moves a deadline earlier.
   */
  confirmLease(sentAt: number, leaseMs: number): void {
    this.validUntil = Math.max(this.validUntil, sentAt + leaseMs);
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
