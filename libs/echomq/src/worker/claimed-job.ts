import { StaleJobError } from '../errors';
import { JOB_IDS, type JobId } from '../ids';
import { jsonText } from '../json';
import {
  appendJobLog,
  assertLogLine,
  newRequestId,
  recordProgress,
  repeatUntilKnown,
  replayWindow,
  type ScriptContext,
} from '../scripts';
import type { Job } from './job';
import type { LeaseKeeper } from './lease-keeper';
import type { RunningJob } from './running-job';
import { monotonicMs } from '../monotonic';

/**
 * The Job a handler receives. A class (not an object of closures) because one is
 * built per job on the hot path; rarely read parts (enqueuedAt, signal) are computed
 * on first access.
 */
export class ClaimedJob<T = unknown> implements Job<T> {
  constructor(
    private readonly running: RunningJob,
    readonly queue: string,
    readonly data: T,
    private readonly ctx: ScriptContext,
    private readonly keeper: LeaseKeeper,
    private readonly leaseMs: number,
    /** The partition claimed from (see Job.partition). */
    readonly partition?: number,
  ) {}

  get id(): JobId {
    return this.running.record.id as JobId;
  }

  get name(): string {
    return this.running.record.name;
  }

  get attempt(): number {
    return this.running.record.attempt;
  }

  get maxAttempts(): number {
    return this.running.record.maxAttempts;
  }

  get attemptInBudget(): number {
    return this.running.record.attempt - this.running.record.budgetBase;
  }

  get enqueuedAt(): Date {
    return new Date(JOB_IDS.parts(this.running.record.id)?.timeMs ?? 0);
  }

  get lane(): string {
    return this.running.record.lane;
  }

  get priority(): number {
    return this.running.record.priority;
  }

  get timeoutMs(): number | null {
    return this.running.timeoutMs;
  }

  get signal(): AbortSignal {
    return this.running.signal;
  }

  progress(value: unknown): Promise<void> {
    const text = jsonText(
      value ?? null,
      (reason) => new TypeError(`progress must be JSON-serialisable: ${reason}`),
    );
    return recordProgress(this.ctx, this.running.claim, text);
  }

  async log(line: string): Promise<void> {
    assertLogLine(line);
    // One request id for every try: a repeat of a line that was written appends nothing. Repeats
    // end with the lease (a stale claim cannot write anyway) and well inside the replay window.
    const requestId = newRequestId();
    const untilMs = Math.min(this.running.leaseValidUntil, monotonicMs() + replayWindow(this.ctx) / 2);
    await repeatUntilKnown(() => appendJobLog(this.ctx, this.running.claim, line, requestId), { untilMs });
  }

  async extendLease(ms = this.leaseMs): Promise<void> {
    const kept = await this.keeper.extend([this.running], ms);
    if (kept.length === 0) throw new StaleJobError(this.running.record.id, this.running.record.attempt);
  }
}
