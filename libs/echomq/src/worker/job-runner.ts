import { EventEmitter } from 'node:events';
import type { Logger } from '@nestjs/common';
import { UnrecoverableError } from '../errors';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import type { ScriptContext } from '../scripts';
import { withDeadline, type HandlerOutcome } from './attempt-deadline';
import { ClaimedJob } from './claimed-job';
import type { Completer } from './completer';
import type { Job } from './job';
import type { LeaseKeeper } from './lease-keeper';
import { OutcomeSettler } from './outcome-settler';
import { QueueHold, type OtherPhysicalQueues } from './queue-hold';
import type { RunningJob } from './running-job';
import type { WorkerEventEmitter, WorkerEvents } from './worker-events';
import { PASS_THROUGH, type RuntimeObserver } from './runtime-observer';
import { SettlementReports } from './settlement-report';
import { monotonicMs } from '../monotonic';

export type Dispatch = (job: Job) => unknown;

export type { WorkerEvents, WorkerEventEmitter } from './worker-events';

/** What the claim loop hears about one job while the runner has it. */
export interface RunHooks {
  /** The handler returned or threw, or its timeout settled the attempt: the job's slot is free. */
  handlerDone(): void;
  /** The attempt timed out while the handler still runs: busy work until `handler` settles. */
  lingering(handler: Promise<void>): void;
}

const NO_HOOKS: RunHooks = { handlerDone: () => undefined, lingering: () => undefined };

const succeeded = (value: unknown): HandlerOutcome => ({ ok: true, value });
const threw = (error: unknown): HandlerOutcome => ({ ok: false, error });

/**
 * Moves a schedule on from the occurrence just claimed (QueueService.advanceSchedule); the
 * reaper's sweep is the safety net when this fails or the process dies first.
 */
export type AdvanceSchedule = (
  scheduleKey: string,
  occurrenceId: string,
  traceContext?: string,
) => Promise<unknown>;

export interface JobRunnerTiming {
  /** How long after its first send a settlement may be repeated under its request id. */
  readonly repeatForMs: number;
}

/** Where a runner's jobs come from, when that is one partition of a queue served by several loops. */
export interface RunnerPlacement {
  /** The partition claimed from (Job.partition); undefined for the queue itself. */
  readonly partition?: number;
  /** The queue's worker events, shared by its loops; by default the runner has its own. */
  readonly events?: WorkerEventEmitter;
  /** The queue's other physical queues, which a throttle of scope 'queue' holds too (see QueueHold). */
  readonly otherPhysical?: OtherPhysicalQueues;
}

/**
 * Runs one claimed job: builds the Job a handler sees, calls the handler (through the
 * observer's aroundHandler: metrics, tracing), and has the outcome settled (see
 * OutcomeSettler: complete, fail, throttle or release, each repeated through transient Redis
 * errors while the lease lasts). The observer hears how each job's settlement ended, once,
 * before the worker event (see SettlementReports).
 */
export class JobRunner {
  /** Worker-side outcomes, once Redis has recorded them (see WorkerEvents). */
  readonly events: WorkerEventEmitter;
  /** How each job's settlement ended, told to the observer once (see SettlementReports). */
  private readonly reports: SettlementReports;
  private readonly settler: OutcomeSettler;

  constructor(
    /** The queue as users name it (job.queue, observers, events): a partitioned queue's own name. */
    private readonly queue: string,
    private readonly options: ResolvedQueueOptions,
    private readonly ctx: ScriptContext,
    private readonly keeper: LeaseKeeper,
    completer: Completer,
    private readonly dispatch: Dispatch,
    private readonly logger: Logger,
    timing: JobRunnerTiming,
    private readonly advanceSchedule?: AdvanceSchedule,
    /** This process's observers of the worker runtime (the claim loop reports its claims to it too). */
    readonly observer: RuntimeObserver = PASS_THROUGH,
    private readonly placement: RunnerPlacement = {},
  ) {
    this.events = placement.events ?? new EventEmitter<WorkerEvents>();
    this.reports = new SettlementReports(queue, observer, logger);
    const { otherPhysical } = placement;
    this.settler = new OutcomeSettler({
      ...{ queue, options, ctx, completer, logger, observer, events: this.events },
      ...(otherPhysical ? { queueHold: new QueueHold(ctx, otherPhysical, logger) } : {}),
      repeatForMs: timing.repeatForMs,
      reports: this.reports,
      jobOf: (running) => running.job ?? this.toJob(running),
      seenJob: (running) => running.job,
    });
  }

  /** Settlements refused as STALE (the lease had been lost); exposed for monitoring and tests. */
  get staleSettlements(): number {
    return this.settler.staleSettlements;
  }

  /**
   * At shutdown: the job was released to pending while its handler still runs (it ignored its
   * abort). Its settlement is moot whenever the handler returns, so it counts as released now.
   */
  readonly releasedWhileRunning = (running: RunningJob): void => this.reports.report(running, 'released');

  /** At shutdown: settlement calls are not repeated after this local time. */
  stopRepeatingAt(ms: number): void {
    this.settler.stopRepeatingAt(ms);
  }

  /**
   * Runs the handler, then settles. `hooks.handlerDone` is called as soon as the handler
   * returns or throws (or its timeout passes), before the settle round trip, so the loop can
   * claim the next job while this one's outcome is on its way to Redis.
   */
  async run(running: RunningJob, hooks: RunHooks = NO_HOOKS): Promise<void> {
    this.advanceFrom(running);
    const startedAt = monotonicMs();
    const outcome = await withDeadline(running, this.invoke(running), hooks.lingering, this.logger);
    // Until the handler returned, threw or was timed out: what a lingering handler does later is not timed.
    this.reports.handlerReturned(running, monotonicMs() - startedAt);
    // Stop heartbeating before settling: an extend that reached Redis after the
    // completion would report the lease lost and abort a job that just succeeded
    // (and a timed-out job's lease must not outlive its failure).
    this.keeper.untrack(running);
    hooks.handlerDone();
    try {
      // Released at shutdown and recorded: the job is back in pending, its outcome moot. A
      // release that failed or was refused settles as usual, so a handler that succeeded still completes.
      if (running.released && (await running.released)) this.reports.report(running, 'released');
      else this.reports.report(running, await this.settler.settle(running, outcome));
    } finally {
      // A settlement that threw: its outcome is unknown (ignored when it was reported already).
      this.reports.report(running, 'unknown');
    }
  }

  /**
   * A schedule's occurrence: its next one is created now, beside the handler (not before it:
   * the handler does not wait on it), so the schedule goes on whatever this run does. A failed
   * advance is logged and left to the reapers' sweep; it never fails the job.
   */
  private advanceFrom(running: RunningJob): void {
    const key = running.record.scheduleKey;
    if (key === undefined || !this.advanceSchedule) return;
    this.advanceSchedule(key, running.record.id, running.record.traceContext).catch((error: unknown) => {
      this.logger.warn(
        `Could not advance schedule ${key} from job ${running.record.id} (${(error as Error).message}); ` +
          'the reaper will',
      );
    });
  }

  /**
   * The handler's outcome, never a rejection. Written with then() rather than as async
   * functions: this runs once per job, and each async layer is one more promise and frame.
   */
  private invoke(running: RunningJob): Promise<HandlerOutcome> {
    try {
      return this.observer
        .aroundHandler(this.queue, running.record, () => this.handle(running))
        .then(succeeded, threw);
    } catch (error) {
      return Promise.resolve(threw(error));
    }
  }

  /**
   * The handler's promise; what throws before it returns one (data that is not JSON, a
   * synchronous throw) rejects it, as the executor's throw rejects a new Promise.
   */
  private handle(running: RunningJob): Promise<unknown> {
    return new Promise((resolve) => resolve(this.dispatch(this.toJob(running))));
  }

  private toJob(running: RunningJob): Job {
    let data: unknown;
    try {
      data = JSON.parse(running.record.data);
    } catch {
      throw new UnrecoverableError(`Job ${running.record.id} carries data that is not JSON`);
    }
    const { partition } = this.placement;
    const job = new ClaimedJob(
      running,
      this.queue,
      data,
      this.ctx,
      this.keeper,
      this.options.leaseMs,
      partition,
    );
    // The Job each handler saw, handed to the events of its outcome.
    running.job = job;
    return job;
  }
}
