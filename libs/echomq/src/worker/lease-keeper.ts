import type { Logger } from '@nestjs/common';
import { extendLeases, type ScriptContext } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { newRequestId } from '../scripts/request-id';
import type { RunningJob } from './running-job';
import { monotonicMs } from '../monotonic';

/** How often local lease estimates are checked, whatever Redis does: a tenth of the lease, 10 ms to 1 s. */
function sweepEvery(leaseMs: number): number {
  return Math.max(10, Math.min(1_000, Math.floor(leaseMs / 10)));
}

/**
 * The heartbeat of one claim loop: every lease/3 it extends all of the loop's
 * in-flight leases, in script calls of at most SCRIPT_BATCH_MAX claims. A claim the
 * script reports stale (reaped and re-claimed elsewhere, or removed) has its job's
 * signal aborted.
 *
 * Separately, a sweep on its own timer aborts every job whose local lease estimate ran
 * out. It awaits nothing, so it works while Redis is unreachable or a heartbeat hangs:
 * past that point another worker may already hold the job, and its handler must be told.
 */
export class LeaseKeeper {
  private readonly jobs = new Map<string, RunningJob>();
  private beatTimer?: NodeJS.Timeout;
  private sweepTimer?: NodeJS.Timeout;
  private beating = false;

  constructor(
    private readonly ctx: ScriptContext,
    private readonly leaseMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.stop();
    this.beatTimer = setInterval(() => void this.beat(), Math.max(10, Math.floor(this.leaseMs / 3)));
    this.sweepTimer = setInterval(() => this.sweep(), sweepEvery(this.leaseMs));
  }

  /** Stops both timers: from Redis's side and the handlers', the process is frozen. */
  stop(): void {
    clearInterval(this.beatTimer);
    clearInterval(this.sweepTimer);
    this.beatTimer = this.sweepTimer = undefined;
  }

  track(job: RunningJob): void {
    this.jobs.set(job.claim.claimant, job);
  }

  untrack(job: RunningJob): void {
    if (this.jobs.get(job.claim.claimant) === job) this.jobs.delete(job.claim.claimant);
  }

  /**
   * Extends the given claims now (all tracked ones when omitted); returns the claims still
   * held. Slices whose call failed leave their jobs' estimates as they were (the sweep
   * aborts them if that runs out); the first such error is thrown after the others are applied.
   */
  async extend(jobs: RunningJob[] = [...this.jobs.values()], leaseMs = this.leaseMs): Promise<RunningJob[]> {
    const live = jobs.filter((job) => !job.aborted);
    const slices: RunningJob[][] = [];
    for (let at = 0; at < live.length; at += SCRIPT_BATCH_MAX)
      slices.push(live.slice(at, at + SCRIPT_BATCH_MAX));
    const sentAt = monotonicMs();
    const outcomes = await Promise.allSettled(
      slices.map((slice) =>
        extendLeases(
          this.ctx,
          slice.map((job) => job.claim),
          leaseMs,
          newRequestId(),
        ),
      ),
    );
    const kept: RunningJob[] = [];
    let failure: Error | undefined;
    outcomes.forEach((outcome, index) => {
      if (outcome.status === 'rejected') {
        failure ??= outcome.reason instanceof Error ? outcome.reason : new Error(String(outcome.reason));
        return;
      }
      outcome.value.held.forEach((ok, at) => this.apply(slices[index][at], ok, sentAt, leaseMs, kept));
    });
    if (failure) throw failure;
    return kept;
  }

  private apply(job: RunningJob, held: boolean, sentAt: number, leaseMs: number, kept: RunningJob[]): void {
    if (held) {
      job.confirmLease(sentAt, leaseMs);
      kept.push(job);
    } else if (this.jobs.get(job.claim.claimant) === job) {
      this.logger.warn(
        `Lease on ${job.record.id} (attempt ${job.record.attempt}) is lost; aborting its handler`,
      );
      job.abort('lease-lost', `The lease on job ${job.record.id} was lost (reaped, re-claimed or removed)`);
    }
  }

  /**
   * One heartbeat at a time: a beat still waiting on Redis (each call is bounded by the
   * command deadline) makes the next one skip, and the sweep covers its jobs meanwhile.
   */
  private async beat(): Promise<void> {
    if (this.beating || this.jobs.size === 0) return;
    this.beating = true;
    try {
      await this.extend();
    } catch (error) {
      this.logger.warn(`Heartbeat failed: ${(error as Error).message}`);
    } finally {
      this.beating = false;
    }
  }

  private sweep(): void {
    const now = monotonicMs();
    let expired = 0;
    for (const job of this.jobs.values()) {
      if (job.aborted || now <= job.leaseValidUntil) continue;
      expired += 1;
      job.abort('lease-lost', `The lease on job ${job.record.id} ran out before Redis confirmed an extend`);
    }
    if (expired > 0) {
      this.logger.warn(`${expired} lease(s) ran out without a confirmed extend; their handlers were aborted`);
    }
  }
}
