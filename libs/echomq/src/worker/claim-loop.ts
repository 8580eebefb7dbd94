import type { Logger } from '@nestjs/common';
import { Cluster } from 'ioredis';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import type { DurableScriptContext } from '../durability/durable-context';
import { ChangeSignal } from './change-signal';
import { runClaimPasses } from './claim-passes';
import type { JobRunner, WorkerEventEmitter } from './job-runner';
import { JobSlots } from './job-slots';
import type { CancelSubscription, CancelWatch } from './cancel-watch';
import { isolationMember, type IsolationGate, type IsolationMember } from './isolation-gate';
import type { LeaseKeeper } from './lease-keeper';
import { drainAtStop } from './release-at-shutdown';
import type { WakeWaiter } from './wake-waiter';
import { monotonicMs } from '../monotonic';
import { LoopLiveness, StepBounds, type LoopLivenessView } from './loop-liveness';
import type { HandlerAges } from './job-slots';
import type { QueueLoop } from './queue-loop';
import { SharedSlots, type SlotBudget } from './shared-slots';

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
 * One processor's claim loop on one physical queue (the queue, or a partition: PartitionLoops).
 * It claims as many jobs as it has free slots (SharedSlots: the queue's concurrency, shared
 * with its other partitions), in calls of at most SCRIPT_BATCH_MAX, and runs them concurrently.
 * When the queue is empty it blocks on the wake list until enqueue signals, bounded by the next
 * scheduled run-at, so an idle queue costs no polling; when the queue is rate-limited or held it
 * sleeps until the limit ends (see runClaimPasses). What it claims, and when, also follows its
 * process's IsolationGate: a job that may have crashed its last worker runs with nothing else in
 * flight in the process. This class is the loop's life: its parts, start, stop and what it reports.
 */
export class ClaimLoop implements QueueLoop {
  /** Aborted when claiming stops; a restart gets a fresh one. */
  private stopped = new AbortController();
  private readonly handlerWork = new Set<Promise<void>>();
  private stopping = false;
  /** Set by stop(): the shutdown deadline ended the runner's repeats for good, so no restart. */
  private shutDown = false;
  /** A stopClaiming() in progress: start() refuses until it is done. */
  private halting?: Promise<void>;
  private loop?: Promise<void>;
  private readonly changes: ChangeSignal;
  private readonly slots: JobSlots;
  /** This loop in its process's IsolationGate. */
  private readonly member: IsolationMember;
  /** This queue's cancels, followed while the loop holds jobs (see CancelWatch). */
  private cancelled?: CancelSubscription;
  /** The step the loop is in and its bound, for the health indicator (see LoopLiveness). */
  private readonly liveness = new LoopLiveness();
  private readonly bounds: StepBounds;
  /** The slots this loop may claim into, shared with the other loops of its queue. */
  readonly budget: SlotBudget;

  constructor(
    /** The physical queue claimed from: the queue itself, or one partition (`q#2`). */
    readonly queue: string,
    readonly options: ResolvedQueueOptions,
    private readonly ctx: DurableScriptContext,
    readonly runner: JobRunner,
    private readonly keeper: LeaseKeeper,
    private readonly waiter: WakeWaiter,
    private readonly logger: Logger,
    private readonly timing: ClaimLoopTiming,
    /** Shared by the loops of one process: crash suspects run alone in it (see IsolationGate). */
    private readonly gate: IsolationGate,
    /** Aborts handlers of jobs removed while they run; without one, the heartbeat does (lease lost). */
    private readonly cancels?: CancelWatch,
    /** The queue's concurrency, shared by its loops; by default the loop's own. */
    shares: SharedSlots = new SharedSlots(options.concurrency, gate.changes),
  ) {
    this.changes = new ChangeSignal(shares.changes);
    // A claim's reply comes at most a replay window after the claim ran (its last repeat).
    const keepCancelsMs = timing.repeatForMs + timing.commandTimeoutMs;
    this.slots = new JobSlots(
      runner,
      keeper,
      this.changes,
      logger,
      queue,
      options.concurrency,
      keepCancelsMs,
    );
    this.budget = shares.join(this.slots);
    // A loop an error ended claims nothing more: its share goes to the others.
    this.liveness.onEnded(() => this.budget.park());
    this.member = isolationMember(queue, logger, options.leaseMs, this.slots);
    this.bounds = new StepBounds(timing, {
      cluster: ctx.redis instanceof Cluster,
      ...(ctx.durability ? { durableLeaseMs: options.leaseMs } : {}),
    });
  }

  /** The step the loop is in (none once stopped) and what ended it if it ended unexpectedly. */
  get health(): LoopLivenessView {
    return this.liveness;
  }

  /** The handlers running now and the age of the oldest (health's maxHandlerMs, the metrics). */
  get handlerAges(): HandlerAges {
    return this.slots.handlerAges();
  }

  /**
   * Calls `listener` with the reason when an error escapes the loop (a defect: the loop claims
   * nothing more until it is started again), after it was logged and kept for health.
   */
  onEnded(listener: (reason: string) => void): void {
    this.liveness.onEnded(listener);
  }

  // events, inFlight and lingering: see QueueLoop (lingering past `concurrency` takes slots: JobSlots).
  get events(): WorkerEventEmitter {
    return this.runner.events;
  }

  get inFlight(): number {
    return this.slots.runningCount;
  }

  get lingering(): number {
    return this.slots.lingeringCount;
  }

  /**
   * Whether a job of this queue that may have crashed its last worker holds the process's
   * claims: the loop waits for the process to empty so it can claim the job alone, or the job
   * runs alone (see IsolationGate).
   */
  get isolating(): boolean {
    return this.gate.isolating(this.member);
  }

  /** Whether the loop claims now: started, and neither stopClaiming() nor stop() called since. */
  get claiming(): boolean {
    return this.loop !== undefined && !this.stopping;
  }

  /** Whether a handler is running or a finished job's outcome is still on its way to Redis. */
  get busy(): boolean {
    return this.slots.busy || this.handlerWork.size > 0;
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
    this.cancelled ??= this.cancels?.watch(this.ctx.keys, (id, attempt) => this.slots.cancel(id, attempt));
    this.gate.join(this.member);
    this.budget.ready();
    this.loop = this.liveness.follow(this.run(), this.logger, this.queue);
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
   * graceMs + 3 command deadlines + 1 s (see drainAtStop). Final: the loop does not start again.
   */
  async stop(graceMs: number): Promise<void> {
    this.shutDown = true;
    await this.halting?.catch(() => undefined);
    await this.halt(graceMs, true);
  }

  private async halt(graceMs: number, final: boolean): Promise<void> {
    const graceEnd = monotonicMs() + graceMs;
    const repeatEnd = graceEnd + this.timing.commandTimeoutMs;
    this.stopping = true;
    this.stopped.abort();
    if (final) this.runner.stopRepeatingAt(repeatEnd);
    this.waiter.interrupt();
    this.changes.notify();
    await this.loop;
    // Claiming is over: jobs still running get their grace, then are released, their attempts settled.
    this.budget.park();
    this.gate.leave(this.member);
    const { ctx, queue, slots, logger, runner } = this;
    const stopping = { ctx, queue, slots, logger, releasedWhileRunning: runner.releasedWhileRunning };
    await drainAtStop(stopping, graceEnd, repeatEnd);
    // A handler that ignored its abort still holds its lease: only a shutdown stops its heartbeat
    // (and the cancels watch, which can still abort it when it is removed).
    if (final || this.slots.runningCount === 0) {
      this.keeper.stop();
      this.cancelled?.stop();
      this.cancelled = undefined;
    }
    this.waiter.interrupt();
    this.liveness.cleared();
  }

  private async run(): Promise<void> {
    // Claim only once the cancels stream is followed, so no removal of a claimed job is missed
    // (bounded: its first try is one command).
    this.liveness.enter('starting', this.bounds.startMs);
    await this.cancelled?.ready;
    const { ctx, queue, options, logger, slots, budget, changes, gate, member, waiter } = this;
    const { liveness, bounds } = this;
    await runClaimPasses({
      ...{ ctx, queue, options, logger, slots, budget, changes, gate, member, waiter, liveness, bounds },
      observer: this.runner.observer,
      repeatForMs: this.timing.repeatForMs,
      stopped: this.stopped.signal,
    });
  }
}
