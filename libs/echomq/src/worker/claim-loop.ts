import type { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import { claimJobs, releaseJobs, type ScriptContext } from '../scripts';
import type { JobRunner, WorkerEventEmitter } from './job-runner';
import type { LeaseKeeper } from './lease-keeper';
import { RunningJob } from './running-job';
import type { WakeWaiter } from './wake-waiter';

/** Longest an idle loop blocks before it claims again anyway (a safety net, not a poll). */
const IDLE_MAX_MS = 5_000;
const ERROR_BACKOFF_MAX_MS = 5_000;

/**
 * One processor's claim loop. It claims as many jobs as it has free slots in one
 * call, runs them concurrently and never holds more than `concurrency`. When the
 * queue is empty it blocks on the wake list until enqueue signals, bounded by the
 * next scheduled run-at, so an idle queue costs no polling.
 */
export class ClaimLoop {
  /** Jobs whose handler is running: what concurrency counts. */
  private readonly running = new Map<string, RunningJob>();
  /**
   * Jobs whose handler has returned and whose outcome is on its way to Redis; shutdown
   * waits for these (not for handlers that ignore their abort) before connections close.
   */
  private readonly settling = new Set<Promise<void>>();
  private readonly claimantBase = randomBytes(6).toString('hex');
  private calls = 0;
  private stopping = false;
  private loop?: Promise<void>;
  private changeWaiters: (() => void)[] = [];

  constructor(
    readonly queue: string,
    readonly options: ResolvedQueueOptions,
    private readonly ctx: ScriptContext,
    readonly runner: JobRunner,
    private readonly keeper: LeaseKeeper,
    private readonly waiter: WakeWaiter,
    private readonly logger: Logger,
  ) {}

  /** completed / failed / stale, per job, after Redis recorded the outcome. */
  get events(): WorkerEventEmitter {
    return this.runner.events;
  }

  get inFlight(): number {
    return this.running.size;
  }

  start(): void {
    this.keeper.start();
    this.loop = this.run();
  }

  /**
   * Stops claiming, lets in-flight jobs finish for up to graceMs, then releases the
   * rest to pending (their retry budget intact) and aborts their handlers.
   */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    this.waiter.interrupt();
    this.notify();
    await this.loop;
    await this.settledOrTimeout(graceMs);
    const left = [...this.running.values()];
    if (left.length > 0) {
      try {
        const released = await releaseJobs(
          this.ctx,
          left.map((job) => job.claim),
        );
        this.logger.log(
          `Released ${released.filter(Boolean).length} unfinished job(s) of ${this.queue} to pending`,
        );
      } catch (error) {
        this.logger.error(
          `Could not release jobs at shutdown (${(error as Error).message}); leases will expire`,
        );
      }
      for (const job of left)
        job.abort('shutdown', `The worker is shutting down; job ${job.record.id} was released`);
    }
    // Outcomes already computed still go out (settle retries are bounded by the lease).
    await Promise.all(this.settling);
    this.keeper.stop();
    this.waiter.interrupt();
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      const free = this.options.concurrency - this.running.size;
      if (free <= 0) {
        await this.changed();
        continue;
      }
      try {
        const sentAt = Date.now();
        const batch = await claimJobs(this.ctx, {
          count: free,
          leaseMs: this.options.leaseMs,
          claimantPrefix: `${this.claimantBase}:${++this.calls}`,
        });
        failures = 0;
        for (const record of batch.jobs) this.launch(new RunningJob(record, sentAt, this.options.leaseMs));
        if (batch.jobs.length < free && !this.stopping) {
          // Pending is empty (or the queue is paused): sleep until woken or the next run-at.
          const serverNow = batch.leaseDeadline - this.options.leaseMs;
          const untilDue = batch.nextRunAt === null ? IDLE_MAX_MS : batch.nextRunAt - serverNow;
          await this.waiter.wait(Math.max(0, Math.min(IDLE_MAX_MS, untilDue)));
        }
      } catch (error) {
        if (this.stopping) break;
        failures += 1;
        this.logger.warn(`Claim loop of ${this.queue}: ${(error as Error).message}; retrying`);
        await this.changed(Math.min(ERROR_BACKOFF_MAX_MS, 50 * 2 ** failures));
      }
    }
  }

  private launch(job: RunningJob): void {
    this.running.set(job.claim.claimant, job);
    this.keeper.track(job);
    // The slot frees when the handler returns, not when Redis has recorded the outcome,
    // so the next claim and this job's completion travel together. (A handler that
    // throws synchronously returns before `settled` is assigned, hence the flag.)
    // eslint-disable-next-line prefer-const -- read by handlerDone before the assignment below
    let settled: Promise<void> | undefined;
    let returned = false;
    const handlerDone = (): void => {
      if (!this.running.delete(job.claim.claimant)) return;
      returned = true;
      if (settled) this.settling.add(settled);
      this.notify();
    };
    settled = this.runner
      .run(job, handlerDone)
      .catch((error: Error) => this.logger.error(`Job ${job.record.id}: ${error.message}`))
      .finally(() => {
        handlerDone();
        this.keeper.untrack(job);
        if (settled) this.settling.delete(settled);
      });
    if (returned) this.settling.add(settled);
  }

  /** Resolves when a job finishes or stop() is called (or after timeoutMs, when given). */
  private changed(timeoutMs?: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        this.changeWaiters = this.changeWaiters.filter((waiter) => waiter !== wake);
        resolve();
      };
      const timer = timeoutMs === undefined ? undefined : setTimeout(wake, timeoutMs);
      this.changeWaiters.push(wake);
    });
  }

  private notify(): void {
    const waiters = this.changeWaiters;
    this.changeWaiters = [];
    for (const wake of waiters) wake();
  }

  private async settledOrTimeout(graceMs: number): Promise<void> {
    const deadline = Date.now() + graceMs;
    while (this.running.size > 0 && Date.now() < deadline) {
      await this.changed(deadline - Date.now());
    }
  }
}
