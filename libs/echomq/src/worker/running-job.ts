import { JobAbortedError } from '../errors';
import { JobTimeoutError } from '../flow-errors';
import type { ClaimedJobRecord, ClaimRef } from '../scripts';
import type { Job } from './job';

/** One claimed job while this process holds it: its claim, its abort switch, its lease as seen locally. */
export class RunningJob {
  /** Created when the handler first reads job.signal: most handlers never do, and it is not free. */
  private controller?: AbortController;
  private abortReason?: JobAbortedError | JobTimeoutError;
  private validUntil: number;
  readonly claim: ClaimRef;
  /**
   * Set at shutdown when the loop gives this job back: resolves true once Redis recorded
   * the release (the job is back in pending), false when the release was refused or its
   * outcome never became known. Only a recorded release lets the runner skip settling.
   */
  released?: Promise<boolean>;
  // The runtime's bookkeeping of this job lives on it, not in WeakMaps keyed by it: a field
  // costs less than a weak map's lookup (more so before the JIT warms up), and weak entries
  // cost the garbage collector, for every claimed job.
  /** When its handler started (monotonicMs), while JobSlots runs it. */
  startedAt?: number;
  /** The Job its handler received (JobRunner), once built. */
  job?: Job;
  /** How long its handler ran, once it returned, threw or was timed out (SettlementReports). */
  handlerMs?: number;
  /** Whether its settlement was reported to the observer (SettlementReports: once per job). */
  reported = false;

  constructor(
    readonly record: ClaimedJobRecord,
    sentAt: number,
    leaseMs: number,
    /** The deadline of this attempt, from the handler's start: the job's own, else its processor's; null for none. */
    readonly timeoutMs: number | null = null,
  ) {
    this.claim = { id: record.id, attempt: record.attempt, claimant: record.claimant };
    this.validUntil = sentAt + leaseMs;
  }

  /**
   * Estimate, on this process's monotonic clock (monotonicMs), of when the lease runs out:
   * the latest (send time + lease) of the claim and every extend Redis confirmed. The send
   * time is before Redis read its clock, so the estimate is never later than the real deadline. Past this point the
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
  get reason(): JobAbortedError | JobTimeoutError | undefined {
    return this.abortReason;
  }

  /** Whether shutdown aborted it (first): its work is given back to pending, not failed. */
  get interruptedByShutdown(): boolean {
    return this.abortReason instanceof JobAbortedError && this.abortReason.reason === 'shutdown';
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
    this.abortWith(new JobAbortedError(this.record.id, reason, message));
  }

  /**
   * Aborts because the job was removed while this claim ran (read off the queue's cancels
   * stream): the claim is gone from active, so whatever the handler returns settles as STALE.
   */
  removed(): void {
    const { id, attempt } = this.record;
    this.abort('removed', `Job ${id} was removed while attempt ${attempt} ran; its claim is void`);
  }

  /**
   * Aborts at the attempt's deadline, with the JobTimeoutError the attempt fails with as the
   * signal's reason (unless something aborted it first: the first reason stays).
   */
  timeOut(error: JobTimeoutError): void {
    if (!this.abortReason) this.abortWith(error);
  }

  private abortWith(reason: JobAbortedError | JobTimeoutError): void {
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}
