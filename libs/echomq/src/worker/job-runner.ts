import { EventEmitter } from 'node:events';
import type { Logger } from '@nestjs/common';
import { isTransientRedisError, StaleJobError, UnrecoverableError } from '../errors';
import type { RateLimitedError } from '../flow-errors';
import { jsonText } from '../json';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import { failJob, releaseJobs, throttleJob, type FailOutcome, type ScriptContext } from '../scripts';
import { newRequestId } from '../scripts/request-id';
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
import { monotonicMs } from '../monotonic';

/** Tries of a settlement call that Redis refused outright (nothing was written, so trying again is safe). */
const SETTLE_TRIES = 5;
const RETRY_FIRST_MS = 50;
const RETRY_MAX_MS = 2_000;
const GAVE_UP = Symbol('gave up');

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
export type AdvanceSchedule = (scheduleKey: string, occurrenceId: string) => Promise<unknown>;

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
 * a repeat of a call that took effect reads back its recorded outcome. A stale claim is counted and logged, never thrown out of the loop.
 */
export class JobRunner {
  /** Settlements refused as STALE (the lease had been lost); exposed for monitoring and tests. */
  staleSettlements = 0;
  /** Worker-side outcomes, once Redis has recorded them (see WorkerEvents). */
  readonly events: WorkerEventEmitter = new EventEmitter<WorkerEvents>();
  /** The Job each handler saw, handed to the events of its outcome. */
  private readonly jobs = new WeakMap<RunningJob, Job>();
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
    const outcome = await withDeadline(running, this.invoke(running), hooks.lingering, this.logger);
    // Stop heartbeating before settling: an extend that reached Redis after the
    // completion would report the lease lost and abort a job that just succeeded
    // (and a timed-out job's lease must not outlive its failure).
    this.keeper.untrack(running);
    hooks.handlerDone();
    // Released at shutdown and recorded: the job is back in pending, its outcome moot. A
    // release that failed or was refused settles as usual, so a handler that succeeded still completes.
    if (running.released && (await running.released)) return;
    await this.settle(running, outcome);
  }

  /**
   * A schedule's occurrence: its next one is created now, beside the handler (not before it:
   * the handler does not wait on it), so the schedule goes on whatever this run does. A failed
   * advance is logged and left to the reapers' sweep; it never fails the job.
   */
  private advanceFrom(running: RunningJob): void {
    const key = running.record.scheduleKey;
    if (key === undefined || !this.advanceSchedule) return;
    this.advanceSchedule(key, running.record.id).catch((error: unknown) => {
      this.logger.warn(
        `Could not advance schedule ${key} from job ${running.record.id} (${(error as Error).message}); ` +
          'the reaper will',
      );
    });
  }

  private async invoke(running: RunningJob): Promise<HandlerOutcome> {
    try {
      return { ok: true, value: await this.dispatch(this.toJob(running)) };
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

  private async settle(running: RunningJob, outcome: HandlerOutcome): Promise<void> {
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

  private async complete(running: RunningJob, value: unknown, result: string): Promise<void> {
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
    if (completed === GAVE_UP) return;
    if (!completed) return this.stale(running);
    // A completion always follows a handler run, so its Job exists; toJob is only a fallback.
    this.emit('completed', record.id, value, this.jobs.get(running) ?? this.toJob(running));
  }

  private async fail(running: RunningJob, error: unknown): Promise<void> {
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
    if (failed !== GAVE_UP) {
      this.emit('failed', running.record.id, error, failed.state, this.jobs.get(running));
    }
  }

  /** Back to pending with the attempt not spent; the queue or the job's lane is held for retryAfterMs. */
  private async throttle(running: RunningJob, error: RateLimitedError): Promise<void> {
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
    if (throttled === GAVE_UP) return;
    this.throttleLog.record(running.record.id, retryAfterMs, scope);
    const job = this.jobs.get(running) ?? this.toJob(running);
    this.emit('throttled', running.record.id, retryAfterMs, scope, job);
  }

  private async release(running: RunningJob): Promise<void> {
    const released = await this.attempt(running, 'release', (requestId) =>
      releaseJobs(this.ctx, [running.claim], requestId),
    );
    if (released === GAVE_UP) return;
    if (!released[0]) return this.stale(running);
    this.logger.log(`Job ${running.record.id} was interrupted by shutdown and released to pending`);
  }

  /**
   * One settlement call, made again under the same request id while its outcome is
   * unknown (when `repeatUnknown`) and a few times when Redis refused it, until the job's
   * local lease end, the replay window or the shutdown deadline. StaleJobError passes
   * through; GAVE_UP means the call was given up on (logged).
   */
  private async attempt<T>(
    running: RunningJob,
    verb: string,
    call: (requestId: string) => Promise<T>,
    repeatUnknown = true,
  ): Promise<T | typeof GAVE_UP> {
    const requestId = newRequestId();
    const repeatEnd = monotonicMs() + this.timing.repeatForMs;
    for (let tries = 1; ; tries++) {
      try {
        return await call(requestId);
      } catch (error) {
        if (error instanceof StaleJobError) throw error;
        const untilMs = Math.min(running.leaseValidUntil, repeatEnd, this.stopAtMs);
        const transient = isTransientRedisError(error);
        const again = transient ? repeatUnknown : tries < SETTLE_TRIES;
        if (!again || monotonicMs() >= untilMs) {
          this.logger.error(
            `Could not ${verb} job ${running.record.id} (${(error as Error).message}); ` +
              'the reaper will return it when its lease expires',
          );
          return GAVE_UP;
        }
        const delay = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** tries, untilMs - monotonicMs());
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  private stale(running: RunningJob): void {
    const { record } = running;
    this.staleSettlements += 1;
    this.logger.warn(`Job ${record.id} attempt ${record.attempt} finished after its lease was lost: ignored`);
    this.emit('stale', record.id, record.attempt);
  }

  private emit<K extends keyof WorkerEvents>(name: K, ...args: WorkerEvents[K]): void {
    emitIsolated(this.events, this.logger, this.queue, name, ...args);
  }
}
