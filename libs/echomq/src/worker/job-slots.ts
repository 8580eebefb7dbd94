import type { Logger } from '@nestjs/common';
import type { ChangeSignal } from './change-signal';
import type { JobRunner } from './job-runner';
import type { LeaseKeeper } from './lease-keeper';
import { RecentCancels } from './recent-cancels';
import { monotonicMs } from '../monotonic';
import type { RunningJob } from './running-job';

/** How many handlers of one loop run now, and how long the oldest of them has (ms; null: none runs). */
export interface HandlerAges {
  readonly running: number;
  readonly oldestMs: number | null;
}

/**
 * The jobs one claim loop holds, by stage:
 * - running: the handler runs; what concurrency counts;
 * - settling: the handler returned (or its timeout failed the attempt) and the outcome is on
 *   its way to Redis; shutdown waits for these before connections close;
 * - lingering: a handler still running after its timeout settled the attempt (it ignored its
 *   signal); the loop is busy while it runs, and shutdown waits for it within its grace.
 *   Up to `concurrency` of them are free: a timeout frees its slot at the deadline, so a
 *   rare hang does not stall the loop. Each one past that takes a slot (SharedSlots counts
 *   them over every loop of the queue): a handler that hangs every time then stops the loop
 *   from claiming, with at most 2 × concurrency handlers alive, instead of piling up one more
 *   every timeoutMs.
 * Every change is told to `changes`.
 */
export class JobSlots {
  private readonly running = new Map<string, RunningJob>();
  private readonly settling = new Set<Promise<void>>();
  /** Lingering handlers, each with when it started (monotonicMs). */
  private readonly lingering = new Map<Promise<void>, number>();
  /** Cancels read before their claim was launched here (or meant for other processes). */
  private readonly early: RecentCancels;

  constructor(
    private readonly runner: JobRunner,
    private readonly keeper: LeaseKeeper,
    private readonly changes: ChangeSignal,
    private readonly logger: Logger,
    private readonly queue: string,
    private readonly concurrency: number,
    /** How long a cancel that matched nothing is kept for a launch to come: the replay window. */
    keepCancelsMs: number,
  ) {
    this.early = new RecentCancels(keepCancelsMs);
  }

  /** Jobs whose handler runs and whose attempt is not settled. */
  get runningCount(): number {
    return this.running.size;
  }

  /**
   * Attempts held here that are not settled yet: running handlers, and outcomes on their way
   * to Redis. Each would be reaped (an attempt spent) if the process died now.
   */
  get unsettledCount(): number {
    return this.running.size + this.settling.size;
  }

  /** Handlers still running after their attempt timed out. */
  get lingeringCount(): number {
    return this.lingering.size;
  }

  /** Whether a handler runs (lingering ones too) or an outcome is still on its way to Redis. */
  get busy(): boolean {
    return this.running.size > 0 || this.settling.size > 0 || this.lingering.size > 0;
  }

  /** Whether a handler runs, counting those that outlived their timeout. */
  get handlersRunning(): boolean {
    return this.running.size > 0 || this.lingering.size > 0;
  }

  /**
   * The handlers running now (lingering ones included) and how long the oldest has run: a
   * handler that never returns holds its slot for good when the queue has no timeoutMs (the
   * default), so its age is what shows it (health's maxHandlerMs, echomq_oldest_handler_seconds).
   */
  handlerAges(): HandlerAges {
    let oldest = Infinity;
    for (const job of this.running.values()) oldest = Math.min(oldest, job.startedAt ?? Infinity);
    for (const since of this.lingering.values()) oldest = Math.min(oldest, since);
    const running = this.running.size + this.lingering.size;
    return { running, oldestMs: oldest === Infinity ? null : monotonicMs() - oldest };
  }

  /**
   * Aborts the running job holding this claim, if it runs here: the job was removed while
   * active (see CancelWatch). A scan of the running jobs, at most `concurrency` of them, made
   * only when a job is removed. A cancel that matches nothing is kept briefly (RecentCancels):
   * its claim's reply may still be on its way, and launch() aborts that job at once.
   */
  cancel(id: string, attempt: number): boolean {
    for (const job of this.running.values()) {
      if (job.record.id !== id || job.record.attempt !== attempt || job.aborted) continue;
      this.logger.log(`Job ${id} (attempt ${attempt}) was removed; aborting its handler`);
      job.removed();
      return true;
    }
    this.early.remember(id, attempt);
    return false;
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

  /**
   * Waits until the given jobs' handlers (all running and lingering ones when omitted)
   * returned, or the deadline.
   */
  async handlersReturned(deadlineMs: number, jobs?: readonly RunningJob[]): Promise<void> {
    const busy = (): boolean =>
      jobs === undefined ? this.handlersRunning : jobs.some((job) => this.isRunning(job));
    while (busy() && monotonicMs() < deadlineMs) {
      await this.changes.changed(deadlineMs - monotonicMs());
    }
  }

  /** Runs the job; resolves once its attempt is settled (or given up on). */
  launch(job: RunningJob): Promise<void> {
    // Removed before its claim reached us: the handler starts with its signal already aborted,
    // and its settlement is STALE, as for a removal read a moment later.
    if (this.early.take(job.record.id, job.record.attempt)) {
      this.logger.log(
        `Job ${job.record.id} (attempt ${job.record.attempt}) was removed before it started; aborting it`,
      );
      job.removed();
    }
    this.running.set(job.claim.claimant, job);
    const startedAt = monotonicMs();
    job.startedAt = startedAt;
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
      this.lingering.set(handler, startedAt);
      if (this.lingering.size === this.concurrency + 1) this.warnHeldBack();
      void handler.finally(() => {
        this.lingering.delete(handler);
        this.changes.notify();
      });
    };
    const finish = (): void => {
      handlerDone();
      this.keeper.untrack(job);
      if (settled) this.settling.delete(settled);
      // Settled: the attempt is no longer held here (crash isolation waits for that).
      this.changes.notify();
    };
    // (one then() rather than catch() and finally(): two promises fewer per job)
    settled = this.runner.run(job, { handlerDone, lingering }).then(finish, (error: Error) => {
      this.logger.error(`Job ${job.record.id}: ${error.message}`);
      finish();
    });
    if (returned) this.settling.add(settled);
    return settled;
  }

  /** Once each time the lingering handlers grow past concurrency: from here on they take slots. */
  private warnHeldBack(): void {
    this.logger.warn(
      `Queue ${this.queue}: ${this.lingering.size} timed-out handlers are still running, more than its ` +
        `concurrency (${this.concurrency}); each one past that takes a slot until it returns`,
    );
  }
}
