import type { Logger } from '@nestjs/common';
import { StaleJobError, UnrecoverableError } from '../errors';
import type { RateLimitedError } from '../flow-errors';
import { jsonText } from '../json';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import { failJob, releaseJobs, throttleJob, type FailOutcome, type ScriptContext } from '../scripts';
import type { SettledOutcome, SettleVerb } from '../observability/runtime-hooks';
import type { HandlerOutcome } from './attempt-deadline';
import type { Completer } from './completer';
import { failRequest } from './fail-request';
import type { Job } from './job';
import type { QueueHold } from './queue-hold';
import { rateLimitOf } from './rate-limit-of';
import type { RunningJob } from './running-job';
import type { RuntimeObserver } from './runtime-observer';
import { GAVE_UP, repeatSettlement, type SettleRepeat } from './settle-repeat';
import type { SettlementReports } from './settlement-report';
import { ThrottleLog } from './throttle-log';
import { emitIsolated, type WorkerEventEmitter, type WorkerEvents } from './worker-events';

function resultJson(value: unknown): string {
  if (value === undefined) return '';
  return jsonText(
    value,
    (reason) => new UnrecoverableError(`The result is not JSON-serialisable: ${reason}`),
  );
}

/** What one queue's settler works with (its JobRunner's parts). */
export interface SettlerParts {
  readonly queue: string;
  readonly options: ResolvedQueueOptions;
  readonly ctx: ScriptContext;
  readonly completer: Completer;
  readonly logger: Logger;
  /** How long after its first send a settlement may be repeated under its request id. */
  readonly repeatForMs: number;
  readonly observer: Pick<RuntimeObserver, 'aroundSettle'>;
  readonly reports: SettlementReports;
  readonly events: WorkerEventEmitter;
  /** Of a partitioned queue: after a throttle of scope 'queue', holds its other physical queues too. */
  readonly queueHold?: QueueHold;
  /** The Job the handler saw, for the event (built afresh when the handler never got one). */
  jobOf(running: RunningJob): Job;
  /** The Job the handler saw, if it got one. */
  seenJob(running: RunningJob): Job | undefined;
}

/**
 * Settles a claim once its handler is done: complete on a value, fail on a throw or at the
 * attempt's timeout, throttle on a RateLimitedError, release when shutdown interrupted it.
 * Each is one call under one request id, repeated through transient Redis errors while the
 * lease lasts (never past the replay window or the shutdown deadline; see repeatSettlement),
 * through the observer's aroundSettle. Redis's answer is reported (SettlementReports), then
 * emitted as the worker event; a STALE answer is counted and logged, never thrown.
 */
export class OutcomeSettler {
  /** Settlements refused as STALE (the lease had been lost). */
  staleSettlements = 0;
  private stopAtMs = Infinity;
  private readonly throttleLog: ThrottleLog;
  /** Each verb's repeat rule, built once (not per settlement, one per job). */
  private readonly repeatRules: Record<SettleVerb, SettleRepeat>;

  constructor(private readonly parts: SettlerParts) {
    this.throttleLog = new ThrottleLog(parts.logger);
    const { repeatForMs, logger } = parts;
    const stopsAt = (): number => this.stopAtMs;
    const rule = (verb: SettleVerb, repeatUnknown = true): SettleRepeat => ({
      verb,
      repeatUnknown,
      repeatForMs,
      stopsAt,
      logger,
    });
    // The Completer repeats its batch under the batch's request id; once it gives up on a
    // transient error the outcome is unknown, and sending again under a new id could read
    // STALE for a completion that happened, so only refusals are tried again here.
    this.repeatRules = {
      complete: rule('complete', false),
      fail: rule('fail'),
      throttle: rule('throttle'),
      release: rule('release'),
    };
  }

  /** At shutdown: settlement calls are not repeated after this local time. */
  stopRepeatingAt(ms: number): void {
    this.stopAtMs = Math.min(this.stopAtMs, ms);
    this.parts.completer.stopRepeatingAt(ms);
  }

  /**
   * Not itself async (one promise less per job): each branch is an async method, and the one
   * caller awaits it inside a try, where a throw here (a handler's error whose properties throw)
   * lands as a rejection would.
   */
  settle(running: RunningJob, outcome: HandlerOutcome): Promise<SettledOutcome> {
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
    // (repeated as repeatRules.complete says)
    const completed = await this.attempt(running, 'complete', () =>
      this.parts.completer.complete({ claim, result }, running.leaseValidUntil),
    );
    if (completed === GAVE_UP) return 'unknown';
    if (!completed) return this.stale(running);
    this.parts.reports.report(running, 'completed');
    // A completion always follows a handler run, so its Job exists; jobOf only falls back.
    this.emit('completed', record.id, value, this.parts.jobOf(running));
    return 'completed';
  }

  private async fail(running: RunningJob, error: unknown): Promise<SettledOutcome> {
    const { options, ctx } = this.parts;
    const request = failRequest(options.backoff, running.record, error, options);
    let failed: FailOutcome | typeof GAVE_UP;
    try {
      failed = await this.attempt(running, 'fail', (requestId) =>
        failJob(ctx, running.claim, request, requestId),
      );
    } catch (reason) {
      if (reason instanceof StaleJobError) return this.stale(running);
      throw reason;
    }
    if (failed === GAVE_UP) return 'unknown';
    const settled = failed.state === 'dead' ? 'dead' : 'retried';
    this.parts.reports.report(running, settled);
    this.emit('failed', running.record.id, error, failed.state, this.parts.seenJob(running));
    return settled;
  }

  /**
   * Back to pending with the attempt not spent; the queue (every partition of it) or the job's
   * lane is held for retryAfterMs.
   */
  private async throttle(running: RunningJob, error: RateLimitedError): Promise<SettledOutcome> {
    const { retryAfterMs, scope } = error;
    let throttled: void | typeof GAVE_UP;
    try {
      throttled = await this.attempt(running, 'throttle', (requestId) =>
        throttleJob(this.parts.ctx, running.claim, retryAfterMs, scope, requestId),
      );
    } catch (reason) {
      if (reason instanceof StaleJobError) return this.stale(running);
      throw reason;
    }
    if (throttled === GAVE_UP) return 'unknown';
    // The hold is the whole queue's: every partition stops calling the service, not only this one.
    if (scope === 'queue') await this.parts.queueHold?.spread();
    this.throttleLog.record(running.record.id, retryAfterMs, scope);
    this.parts.reports.report(running, 'throttled');
    this.emit('throttled', running.record.id, retryAfterMs, scope, this.parts.jobOf(running));
    return 'throttled';
  }

  private async release(running: RunningJob): Promise<SettledOutcome> {
    const released = await this.attempt(running, 'release', (requestId) =>
      releaseJobs(this.parts.ctx, [running.claim], requestId),
    );
    if (released === GAVE_UP) return 'unknown';
    if (!released[0]) return this.stale(running);
    this.parts.logger.log(`Job ${running.record.id} was interrupted by shutdown and released to pending`);
    return 'released';
  }

  /** One settlement call with its repeats (see repeatSettlement), through the observer's aroundSettle. */
  private attempt<T>(
    running: RunningJob,
    verb: SettleVerb,
    call: (requestId: string) => Promise<T>,
  ): Promise<T | typeof GAVE_UP> {
    const repeat = this.repeatRules[verb];
    return this.parts.observer.aroundSettle(this.parts.queue, running.record, verb, () =>
      repeatSettlement(running, call, repeat),
    );
  }

  private stale(running: RunningJob): SettledOutcome {
    const { record } = running;
    this.staleSettlements += 1;
    this.parts.reports.report(running, 'stale');
    this.parts.logger.warn(
      `Job ${record.id} attempt ${record.attempt} finished after its lease was lost: ignored`,
    );
    this.emit('stale', record.id, record.attempt);
    return 'stale';
  }

  private emit<K extends keyof WorkerEvents>(name: K, ...args: WorkerEvents[K]): void {
    emitIsolated(this.parts.events, this.parts.logger, this.parts.queue, name, ...args);
  }
}
