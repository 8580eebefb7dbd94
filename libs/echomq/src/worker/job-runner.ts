import { EventEmitter } from 'node:events';
import type { Logger } from '@nestjs/common';
import { StaleJobError, UnrecoverableError } from '../errors';
import { jsonText } from '../json';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import { failJob, type ScriptContext } from '../scripts';

import { backoffDelay } from './backoff';
import { ClaimedJob } from './claimed-job';
import type { Completer } from './completer';
import type { Job } from './job';
import type { LeaseKeeper } from './lease-keeper';
import type { RunningJob } from './running-job';

const ERROR_TEXT_MAX = 4_096;
const SETTLE_TRIES = 5;

type Outcome =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown };

export type Dispatch = (job: Job) => unknown;

/**
 * What a claim loop reports about its jobs, after Redis recorded it:
 * - completed (id, result): the job completed;
 * - failed (id, error, state): the handler threw; state is where the job went (schedule, pending or dead);
 * - stale (id, attempt): the job finished after its lease was lost; Redis kept the newer claim's state.
 */
export interface WorkerEvents {
  completed: [id: string, result: unknown];
  failed: [id: string, error: unknown, state: 'schedule' | 'pending' | 'dead'];
  stale: [id: string, attempt: number];
}

export type WorkerEventEmitter = EventEmitter<WorkerEvents>;

function describeError(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.length > ERROR_TEXT_MAX ? `${text.slice(0, ERROR_TEXT_MAX)}...` : text;
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
 * settles the claim (complete on a value, fail on a throw). Settling is retried
 * briefly through transient Redis errors while the lease lasts; a stale claim is
 * counted and logged, never thrown out of the loop.
 */
export class JobRunner {
  /** Settlements refused as STALE (the lease had been lost); exposed for monitoring and tests. */
  staleSettlements = 0;
  /** Worker-side outcomes, once Redis has recorded them (see WorkerEvents). */
  readonly events: WorkerEventEmitter = new EventEmitter<WorkerEvents>();

  constructor(
    private readonly queue: string,
    private readonly options: ResolvedQueueOptions,
    private readonly ctx: ScriptContext,
    private readonly keeper: LeaseKeeper,
    private readonly completer: Completer,
    private readonly dispatch: Dispatch,
    private readonly logger: Logger,
  ) {}

  /**
   * Runs the handler, then settles. `handlerDone` is called as soon as the handler
   * returns or throws, before the settle round trip, so the loop can claim the next
   * job while this one's outcome is on its way to Redis.
   */
  async run(running: RunningJob, handlerDone: () => void = () => undefined): Promise<void> {
    let outcome: Outcome;
    try {
      outcome = { ok: true, value: await this.dispatch(this.toJob(running)) };
    } catch (error) {
      outcome = { ok: false, error };
    }
    // Stop heartbeating before settling: an extend that reached Redis after the
    // completion would report the lease lost and abort a job that just succeeded.
    this.keeper.untrack(running);
    handlerDone();
    if (running.reason?.reason === 'shutdown') {
      return; // released at shutdown: the job is already back in pending
    }
    await this.settle(running, outcome);
  }

  private toJob(running: RunningJob): Job {
    let data: unknown;
    try {
      data = JSON.parse(running.record.data);
    } catch {
      throw new UnrecoverableError(`Job ${running.record.id} carries data that is not JSON`);
    }
    return new ClaimedJob(running, this.queue, data, this.ctx, this.keeper, this.options.leaseMs);
  }

  private async settle(running: RunningJob, outcome: Outcome): Promise<void> {
    const { record, claim } = running;
    for (let tries = 1; ; tries++) {
      try {
        if (outcome.ok) {
          let result: string;
          try {
            result = resultJson(outcome.value);
          } catch (error) {
            outcome = { ok: false, error };
            continue;
          }
          if (!(await this.completer.complete({ claim, result })))
            throw new StaleJobError(record.id, record.attempt);
          this.events.emit('completed', record.id, outcome.value);
        } else {
          const spent = record.attempt - record.budgetBase;
          const failed = await failJob(this.ctx, claim, {
            error: describeError(outcome.error),
            backoffMs: backoffDelay(this.options.backoff, spent, outcome.error),
            unrecoverable: outcome.error instanceof UnrecoverableError,
          });
          this.events.emit('failed', record.id, outcome.error, failed.state);
        }
        return;
      } catch (error) {
        if (error instanceof StaleJobError) {
          this.staleSettlements += 1;
          this.events.emit('stale', record.id, record.attempt);
          this.logger.warn(
            `Job ${record.id} attempt ${record.attempt} finished after its lease was lost: ignored`,
          );
          return;
        }
        if (tries >= SETTLE_TRIES || Date.now() > running.leaseValidUntil) {
          this.logger.error(
            `Could not settle job ${record.id} (${(error as Error).message}); the reaper will return it when its lease expires`,
          );
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** tries));
      }
    }
  }
}
