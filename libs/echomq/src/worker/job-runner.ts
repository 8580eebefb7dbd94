import { EventEmitter } from 'node:events';
import type { Logger } from '@nestjs/common';
import { StaleJobError, UnrecoverableError } from '../errors';
import type { RateLimitedError } from '../flow-errors';
import { jsonText } from '../json';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import { failJob, releaseJobs, throttleJob, type FailOutcome, type ScriptContext } from '../scripts';
import type { SettledOutcome, SettleVerb } from '../observability/runtime-hooks';
import { withDeadline, type HandlerOutcome } from './attempt-deadline';
import { ClaimedJob } from './claimed-job';
import type { Completer } from './completer';
import { failRequest } from './fail-request';
import type { Job } from './job';
import type { LeaseKeeper } from './lease-keeper';
import { rateLimitOf } from './rate-limit-of';
import type { RunningJob } from './running-job';
import { ThrottleLog } from './throttle-log';
import { emitIsolated, type WorkerEventEmitter, type WorkerEvents } from './worker-events';
import { PASS_THROUGH, type RuntimeObserver } from './runtime-observer';
import { GAVE_UP, repeatSettlement } from './settle-repeat';
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

function resultJson(value: unknown): string {
  if (value === undefined) return '';
  return jsonText(
    value,
    (reason) => new UnrecoverableError(`The result is not JSON-serialisable: ${reason}`),
  );
}

/**
 * Runs one claimed job: builds the Job a handler sees, calls the handler, and
 * settles the claim (complete on a value, fail on a throw or at the attempt's timeout,
 * throttle on a RateLimitedError, release when the handler was interrupted by shutdown).
 * Each settlement is one call under one request id, repeated through transient Redis
 * errors while the lease lasts (never past the replay window or the shutdown deadline), so
 * a repeat of a call that took effect reads back its recorded outcome. A stale claim is counted
 * and logged, never thrown out of the loop. The handler and the settlement run through the
 * observer (metrics, tracing), which hears how each job's settlement ended.
 */
export class JobRunner {
  /** Settlements refused as STALE (the lease had been lost); exposed for monitoring and tests. */
  staleSettlements = 0;
  /** Worker-side outcomes, once Redis has recorded them (see WorkerEvents). */
  readonly events: WorkerEventEmitter = new EventEmitter<WorkerEvents>();
  /** The Job each handler saw, handed to the events of its outcome. */
  private readonly jobs = new WeakMap<RunningJob, Job>();
  /** How long each job's handler ran, for the observer; a job in it has not been reported settled yet. */
  private readonly handlerMs = new WeakMap<RunningJob, number>();
  private stopAtMs = Infinity;
  private readonly throttleLog: ThrottleLog;

  constructor(
    private readonly queue: string,
    private readonly options: ResolvedQueueOptions,
    private readonly ctx: ScriptContext,
    private readonly keeper: LeaseKeeper,
    private readonly completer: Completer,
    private readonly dispatch: Dispatch,
    private readonly logger: Logger,
    private readonly timing: JobRunnerTiming,
    private readonly advanceSchedule?: AdvanceSchedule,
    /** This process's observers of the worker runtime (the claim loop reports its claims to it too). */
    readonly observer: RuntimeObserver = PASS_THROUGH,
  ) {
    this.throttleLog = new ThrottleLog(logger);
  }

  /** At shutdown: settlement calls are not repeated after this local time. */
  stopRepeatingAt(ms: number): void {
    this.stopAtMs = Math.min(this.stopAtMs, ms);
    this.completer.stopRepeatingAt(ms);
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
    this.handlerMs.set(running, monotonicMs() - startedAt);
    // Stop heartbeating before settling: an extend that reached Redis after the
    // completion would report the lease lost and abort a job that just succeeded
    // (and a timed-out job's lease must not outlive its failure).
    this.keeper.untrack(running);
    hooks.handlerDone();
    try {
      // Released at shutdown and recorded: the job is back in pending, its outcome moot. A
      // release that failed or was refused settles as usual, so a handler that succeeded still completes.
      if (running.released && (await running.released)) this.report(running, 'released');
      else this.report(running, await this.settle(running, outcome));
    } finally {
      this.report(running, 'unknown');
    }
  }

  /**
   * Tells the observer how the job's settlement ended, once: before the worker event, so a
   * listener of that event already finds it counted. Later reports of the same job are ignored.
   */
  private report(running: RunningJob, outcome: SettledOutcome): void {
    if (!this.handlerMs.has(running)) return;
    const handlerMs = this.handlerMs.get(running);
    this.handlerMs.delete(running);
    this.observer.settled(this.queue, running.record, outcome, handlerMs);
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

  private async invoke(running: RunningJob): Promise<HandlerOutcome> {
    try {
      const value = await this.observer.aroundHandler(this.queue, running.record, async () =>
        this.dispatch(this.toJob(running)),
      );
      return { ok: true, value };
    } catch (error) {
      return { ok: false, error };
    }
  }

  private toJob(running: RunningJob): Job {
    let data: unknown;
    try {
      data = JSON.parse(running.record.data);
    } catch {
      throw new UnrecoverableError(`Job ${running.record.id} carries data that is not JSON`);
    }
    const job = new ClaimedJob(running, this.queue, data, this.ctx, this.keeper, this.options.leaseMs);
    this.jobs.set(running, job);
    return job;
  }

  private async settle(running: RunningJob, outcome: HandlerOutcome): Promise<SettledOutcome> {
    if (outcome.ok) {
      let result: string;
      try {
        result = resultJson(outcome.value);
      } catch (error) {
        return this.fail(running, error);
      }
      return this.complete(running, outcome.value, result);
    }
    // Interrupted by shutdown and not released yet: give it back rather than spend its budget.
    if (running.interruptedByShutdown) return this.release(running);
    const limited = rateLimitOf(outcome.error);
    if (limited) return this.throttle(running, limited);
    return this.fail(running, outcome.error);
  }

  private async complete(running: RunningJob, value: unknown, result: string): Promise<SettledOutcome> {
    const { record, claim } = running;
    // The Completer repeats its batch under the batch's request id; once it gives up on a
    // transient error the outcome is unknown, and sending again under a new id could read
    // STALE for a completion that happened, so only refusals are tried again here.
    const completed = await this.attempt(
      running,
      'complete',
      () => this.completer.complete({ claim, result }, running.leaseValidUntil),
      false,
    );
    if (completed === GAVE_UP) return 'unknown';
    if (!completed) return this.stale(running);
    this.report(running, 'completed');
    // A completion always follows a handler run, so its Job exists; toJob is only a fallback.
    this.emit('completed', record.id, value, this.jobs.get(running) ?? this.toJob(running));
    return 'completed';
  }

  private async fail(running: RunningJob, error: unknown): Promise<SettledOutcome> {
    const request = failRequest(this.options.backoff, running.record, error, this.options);
    let failed: FailOutcome | typeof GAVE_UP;
    try {
      failed = await this.attempt(running, 'fail', (requestId) =>
        failJob(this.ctx, running.claim, request, requestId),
      );
    } catch (reason) {
      if (reason instanceof StaleJobError) return this.stale(running);
      throw reason;
    }
    if (failed === GAVE_UP) return 'unknown';
    const settled = failed.state === 'dead' ? 'dead' : 'retried';
    this.report(running, settled);
    this.emit('failed', running.record.id, error, failed.state, this.jobs.get(running));
    return settled;
  }

  /** Back to pending with the attempt not spent; the queue or the job's lane is held for retryAfterMs. */
  private async throttle(running: RunningJob, error: RateLimitedError): Promise<SettledOutcome> {
    const { retryAfterMs, scope } = error;
    let throttled: void | typeof GAVE_UP;
    try {
      throttled = await this.attempt(running, 'throttle', (requestId) =>
        throttleJob(this.ctx, running.claim, retryAfterMs, scope, requestId),
      );
    } catch (reason) {
      if (reason instanceof StaleJobError) return this.stale(running);
      throw reason;
    }
    if (throttled === GAVE_UP) return 'unknown';
    this.throttleLog.record(running.record.id, retryAfterMs, scope);
    this.report(running, 'throttled');
    const job = this.jobs.get(running) ?? this.toJob(running);
    this.emit('throttled', running.record.id, retryAfterMs, scope, job);
    return 'throttled';
  }

  private async release(running: RunningJob): Promise<SettledOutcome> {
    const released = await this.attempt(running, 'release', (requestId) =>
      releaseJobs(this.ctx, [running.claim], requestId),
    );
    if (released === GAVE_UP) return 'unknown';
    if (!released[0]) return this.stale(running);
    this.logger.log(`Job ${running.record.id} was interrupted by shutdown and released to pending`);
    return 'released';
  }

  /** One settlement call with its repeats (see repeatSettlement), through the observer's aroundSettle. */
  private attempt<T>(
    running: RunningJob,
    verb: SettleVerb,
    call: (requestId: string) => Promise<T>,
    repeatUnknown = true,
  ): Promise<T | typeof GAVE_UP> {
    const repeat = {
      verb,
      repeatUnknown,
      repeatForMs: this.timing.repeatForMs,
      stopsAt: () => this.stopAtMs,
      logger: this.logger,
    };
    return this.observer.aroundSettle(this.queue, running.record, verb, () =>
      repeatSettlement(running, call, repeat),
    );
  }

  private stale(running: RunningJob): SettledOutcome {
    const { record } = running;
    this.staleSettlements += 1;
    this.report(running, 'stale');
    this.logger.warn(`Job ${record.id} attempt ${record.attempt} finished after its lease was lost: ignored`);
    this.emit('stale', record.id, record.attempt);
    return 'stale';
  }

  private emit<K extends keyof WorkerEvents>(name: K, ...args: WorkerEvents[K]): void {
    emitIsolated(this.events, this.logger, this.queue, name, ...args);
  }
}
