import type { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { isTransientRedisError } from '../errors';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import { claimJobs, type ClaimBatch, type ScriptContext } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { newRequestId } from '../scripts/request-id';
import type { JobRunner, WorkerEventEmitter } from './job-runner';
import type { LeaseKeeper } from './lease-keeper';
import { releaseAtShutdown } from './release-at-shutdown';
import { RunningJob } from './running-job';
import type { WakeWaiter } from './wake-waiter';
import { warnUnlessUnreachable } from '../connection/warn-unless-unreachable';

/** Longest an idle loop blocks before it claims again anyway (a safety net, not a poll). */
const IDLE_MAX_MS = 5_000;
const ERROR_BACKOFF_MAX_MS = 5_000;
const REPEAT_FIRST_MS = 50;
const REPEAT_MAX_MS = 2_000;
/** After the grace period, how long handlers aborted but not released get to return and be settled. */
const ABORTED_RETURN_MS = 1_000;

export interface ClaimLoopTiming {
  /**
   * How long after its first send a call may still be repeated under its request id: the
   * replay window, less one command deadline, so the last repeat lands while Redis still
   * holds the first call's recorded outcome.
   */
  readonly repeatForMs: number;
  /** The deadline of one Redis command: what one call can add to a shutdown. */
  readonly commandTimeoutMs: number;
}

/**
 * One processor's claim loop. It claims as many jobs as it has free slots, in calls of
 * at most SCRIPT_BATCH_MAX, runs them concurrently and never holds more than
 * `concurrency`. When the queue is empty it blocks on the wake list until enqueue
 * signals, bounded by the next scheduled run-at, so an idle queue costs no polling.
 */
export class ClaimLoop {
  /** Jobs whose handler is running: what concurrency counts. */
  private readonly running = new Map<string, RunningJob>();
  /**
   * Jobs whose handler has returned and whose outcome is on its way to Redis; shutdown
   * waits for these (not for handlers that ignore their abort) before connections close.
   */
  private readonly settling = new Set<Promise<void>>();
  /** Aborted when claiming stops; a restart gets a fresh one. */
  private stopped = new AbortController();
  private readonly handlerWork = new Set<Promise<void>>();
  private stopping = false;
  /** Set by stop(): the shutdown deadline ended the runner's repeats for good, so no restart. */
  private shutDown = false;
  /** A stopClaiming() in progress: start() refuses until it is done. */
  private halting?: Promise<void>;
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
    private readonly timing: ClaimLoopTiming,
  ) {}

  /** completed / failed / stale, per job, after Redis recorded the outcome. */
  get events(): WorkerEventEmitter {
    return this.runner.events;
  }

  get inFlight(): number {
    return this.running.size;
  }

  /** Whether the loop claims now: started, and neither stopClaiming() nor stop() called since. */
  get claiming(): boolean {
    return this.loop !== undefined && !this.stopping;
  }

  /** Whether a handler is running or a finished job's outcome is still on its way to Redis. */
  get busy(): boolean {
    return this.running.size > 0 || this.settling.size > 0 || this.handlerWork.size > 0;
  }

  /**
   * Counts an async @OnWorkerEvent handler as this loop's work until it ends: a handler that
   * enqueues a follow-up job must not let the queue look idle before the job is there.
   */
  trackHandlerWork(settling: Promise<void>): void {
    this.handlerWork.add(settling);
    void settling.finally(() => this.handlerWork.delete(settling));
  }

  /**
   * Starts claiming, or starts again after stopClaiming() (tests run a queue on demand
   * this way, see ProcessorExplorer.startQueue); the same runner, and so the same
   * `events`, serve every run. A loop that was stop()ped does not start again.
   */
  start(): void {
    if (this.shutDown)
      throw new Error(`The claim loop of ${this.queue} was shut down; it does not start again`);
    if (this.halting)
      throw new Error(`The claim loop of ${this.queue} is still stopping; await stopClaiming() first`);
    if (this.claiming) return;
    this.stopping = false;
    this.stopped = new AbortController();
    this.keeper.start();
    this.loop = this.run();
  }

  /**
   * Stops claiming as stop() does (in-flight jobs get graceMs, the rest are released), but
   * not for good: start() claims again. Settlements still running are repeated as usual,
   * bounded by their leases, since the application is not shutting down.
   */
  async stopClaiming(graceMs: number): Promise<void> {
    if (this.halting) return this.halting;
    if (!this.claiming) return;
    this.halting = this.halt(graceMs, false).finally(() => {
      this.halting = undefined;
      this.loop = undefined;
    });
    return this.halting;
  }

  /**
   * Stops claiming, lets in-flight jobs finish for up to graceMs, then releases the rest
   * to pending (their retry budget intact) and aborts their handlers. Every step is
   * bounded whatever the network does: each Redis call by the command deadline, and
   * repeats end one deadline past the grace period, so stop() returns within about
   * graceMs + 3 command deadlines + ABORTED_RETURN_MS. Final: the loop does not start again.
   */
  async stop(graceMs: number): Promise<void> {
    this.shutDown = true;
    await this.halting?.catch(() => undefined);
    await this.halt(graceMs, true);
  }

  private async halt(graceMs: number, final: boolean): Promise<void> {
    const graceEnd = Date.now() + graceMs;
    const repeatEnd = graceEnd + this.timing.commandTimeoutMs;
    this.stopping = true;
    this.stopped.abort();
    if (final) this.runner.stopRepeatingAt(repeatEnd);
    this.waiter.interrupt();
    this.notify();
    await this.loop;
    await this.handlersReturned(graceEnd);
    const left = [...this.running.values()];
    if (left.length > 0) {
      const unreleased = await releaseAtShutdown(this.ctx, this.queue, left, repeatEnd, this.logger);
      // Their outcomes still count: a handler that returns now is settled (see JobRunner.run).
      await this.handlersReturned(Date.now() + ABORTED_RETURN_MS, unreleased);
    }
    // Outcomes already computed still go out (at a shutdown, settle repeats end at repeatEnd).
    await Promise.all(this.settling);
    // A handler that ignored its abort still holds its lease: only a shutdown stops its heartbeat.
    if (final || this.running.size === 0) this.keeper.stop();
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
      const count = Math.min(free, SCRIPT_BATCH_MAX);
      try {
        const batch = await this.claim(count);
        failures = 0;
        if (batch.jobs.length < count && !this.stopping) {
          // Pending is empty (or the queue is paused): sleep until woken or the next run-at.
          const serverNow = batch.leaseDeadline - this.options.leaseMs;
          const untilDue = batch.nextRunAt === null ? IDLE_MAX_MS : batch.nextRunAt - serverNow;
          await this.waiter.wait(Math.max(0, Math.min(IDLE_MAX_MS, untilDue)));
        }
      } catch (error) {
        if (this.stopping) break;
        failures += 1;
        warnUnlessUnreachable(
          this.logger,
          error,
          `Claim loop of ${this.queue}: ${(error as Error).message}; retrying`,
        );
        await this.changed(Math.min(ERROR_BACKOFF_MAX_MS, 50 * 2 ** failures));
      }
    }
  }

  /**
   * One claim of up to `count` jobs, launched as they arrive. While its outcome is unknown
   * it is repeated with the same claimant prefix (the request id): if the lost call did
   * claim jobs, the repeat hands exactly those to this loop, instead of leaving them in
   * active, held by nobody, until their leases run out. Their leases are counted from the
   * first send, the earliest the lost call can have run.
   */
  private async claim(count: number): Promise<ClaimBatch> {
    // maxAttempts: the budget of claimed jobs that have none of their own (recorded on their rows).
    const { leaseMs, maxAttempts } = this.options;
    const request = { count, leaseMs, maxAttempts, claimantPrefix: newRequestId() };
    const sentAt = Date.now();
    const untilMs = sentAt + this.timing.repeatForMs;
    for (let attempt = 1; ; attempt++) {
      try {
        const batch = await claimJobs(this.ctx, request);
        for (const record of batch.jobs) this.launch(new RunningJob(record, sentAt, this.options.leaseMs));
        return batch;
      } catch (error) {
        if (!isTransientRedisError(error) || this.stopping || Date.now() >= untilMs) throw error;
        warnUnlessUnreachable(
          this.logger,
          error,
          `Claim on ${this.queue}: ${error.message}; repeating it (${attempt})`,
        );
        const delay = Math.min(REPEAT_MAX_MS, REPEAT_FIRST_MS * 2 ** (attempt - 1), untilMs - Date.now());
        await sleep(delay, undefined, { signal: this.stopped.signal }).catch(() => undefined);
        if (this.stopping) throw error;
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

  /** Waits until the given jobs' handlers (all running ones when omitted) returned, or the deadline. */
  private async handlersReturned(deadlineMs: number, jobs?: readonly RunningJob[]): Promise<void> {
    const busy = (): boolean =>
      jobs === undefined
        ? this.running.size > 0
        : jobs.some((job) => this.running.get(job.claim.claimant) === job);
    while (busy() && Date.now() < deadlineMs) {
      await this.changed(deadlineMs - Date.now());
    }
  }
}
