import type { Logger } from '@nestjs/common';
import type { ChangeSignal } from './change-signal';
import type { JobRunner } from './job-runner';
import type { LeaseKeeper } from './lease-keeper';
import type { RunningJob } from './running-job';

/**
 * The jobs one claim loop holds, by stage:
 * - running: the handler runs; what concurrency counts;
 * - settling: the handler returned (or its timeout failed the attempt) and the outcome is on
 *   its way to Redis; shutdown waits for these before connections close;
 * - lingering: a handler still running after its timeout settled the attempt; it no longer
 *   counts against concurrency, but the loop is busy, and shutdown waits for it within its grace.
 * Every change is told to `changes`.
 */
export class JobSlots {
  private readonly running = new Map<string, RunningJob>();
  private readonly settling = new Set<Promise<void>>();
  private readonly lingering = new Set<Promise<void>>();

  constructor(
    private readonly runner: JobRunner,
    private readonly keeper: LeaseKeeper,
    private readonly changes: ChangeSignal,
    private readonly logger: Logger,
  ) {}

  /** Jobs whose handler runs and whose attempt is not settled: the slots taken. */
  get taken(): number {
    return this.running.size;
  }

  /** Whether a handler runs (lingering ones too) or an outcome is still on its way to Redis. */
  get busy(): boolean {
    return this.running.size > 0 || this.settling.size > 0 || this.lingering.size > 0;
  }

  /** Whether a handler runs, counting those that outlived their timeout. */
  get handlersRunning(): boolean {
    return this.running.size > 0 || this.lingering.size > 0;
  }

  runningJobs(): RunningJob[] {
    return [...this.running.values()];
  }

  isRunning(job: RunningJob): boolean {
    return this.running.get(job.claim.claimant) === job;
  }

  /** Resolves once every outcome already on its way to Redis has been recorded (or given up on). */
  async settled(): Promise<void> {
    await Promise.all(this.settling);
  }

  launch(job: RunningJob): void {
    this.running.set(job.claim.claimant, job);
    this.keeper.track(job);
    // The slot frees when the handler returns (or its timeout fails the attempt), not when
    // Redis has recorded the outcome, so the next claim and this job's completion travel
    // together. (A handler that throws synchronously returns before `settled` is assigned,
    // hence the flag.)
    // eslint-disable-next-line prefer-const -- read by handlerDone before the assignment below
    let settled: Promise<void> | undefined;
    let returned = false;
    const handlerDone = (): void => {
      if (!this.running.delete(job.claim.claimant)) return;
      returned = true;
      if (settled) this.settling.add(settled);
      this.changes.notify();
    };
    const lingering = (handler: Promise<void>): void => {
      this.lingering.add(handler);
      void handler.finally(() => {
        this.lingering.delete(handler);
        this.changes.notify();
      });
    };
    settled = this.runner
      .run(job, { handlerDone, lingering })
      .catch((error: Error) => this.logger.error(`Job ${job.record.id}: ${error.message}`))
      .finally(() => {
        handlerDone();
        this.keeper.untrack(job);
        if (settled) this.settling.delete(settled);
      });
    if (returned) this.settling.add(settled);
  }
}
