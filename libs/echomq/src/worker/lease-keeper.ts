import type { Logger } from '@nestjs/common';
import { extendLeases, type ScriptContext } from '../scripts';
import type { RunningJob } from './running-job';

/**
 * The heartbeat of one claim loop: every lease/3 it extends all of the loop's
 * in-flight leases in one script call. A claim the script reports stale (reaped and
 * re-claimed elsewhere, or removed) has its job's signal aborted; so does a claim
 * whose lease ran out locally while Redis could not be reached.
 */
export class LeaseKeeper {
  private readonly jobs = new Map<string, RunningJob>();
  private timer?: NodeJS.Timeout;
  private beating = false;

  constructor(
    private readonly ctx: ScriptContext,
    private readonly leaseMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.beat(), Math.max(10, Math.floor(this.leaseMs / 3)));
  }

  stop(): void {
    clearInterval(this.timer);
  }

  track(job: RunningJob): void {
    this.jobs.set(job.claim.claimant, job);
  }

  untrack(job: RunningJob): void {
    if (this.jobs.get(job.claim.claimant) === job) this.jobs.delete(job.claim.claimant);
  }

  /** Extends the given claims now (all tracked ones when omitted); returns the claims still held. */
  async extend(jobs: RunningJob[] = [...this.jobs.values()], leaseMs = this.leaseMs): Promise<RunningJob[]> {
    const live = jobs.filter((job) => !job.aborted);
    if (live.length === 0) return [];
    const sentAt = Date.now();
    const { held } = await extendLeases(
      this.ctx,
      live.map((job) => job.claim),
      leaseMs,
    );
    const kept: RunningJob[] = [];
    held.forEach((ok, index) => {
      const job = live[index];
      if (ok) {
        job.leaseValidUntil = sentAt + leaseMs;
        kept.push(job);
      } else if (this.jobs.get(job.claim.claimant) === job) {
        this.logger.warn(
          `Lease on ${job.record.id} (attempt ${job.record.attempt}) is lost; aborting its handler`,
        );
        job.abort('lease-lost', `The lease on job ${job.record.id} was lost (reaped, re-claimed or removed)`);
      }
    });
    return kept;
  }

  private async beat(): Promise<void> {
    if (this.beating || this.jobs.size === 0) return;
    this.beating = true;
    try {
      await this.extend();
    } catch (error) {
      this.logger.warn(`Heartbeat failed: ${(error as Error).message}`);
      const now = Date.now();
      for (const job of this.jobs.values()) {
        if (now > job.leaseValidUntil) {
          job.abort('lease-lost', `The lease on job ${job.record.id} ran out while Redis was unreachable`);
        }
      }
    } finally {
      this.beating = false;
    }
  }
}
