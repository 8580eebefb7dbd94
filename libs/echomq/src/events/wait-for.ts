import { Logger } from '@nestjs/common';
import { JobNotFoundError, WaitTimeoutError } from '../errors';
import type { JobView } from '../queue/job-view';
import type { QueueEventReader } from './event-reader';
import { outcomeOfView, verdictOf, type Outcome, type Verdict } from './outcome';
import type { QueueEvent } from './queue-event';
import type { EventWaiter } from './waiter-index';

/**
 * How long the last read of the job, when the timeout passes, may take before the wait
 * reports WaitTimeoutError anyway: a Redis that does not answer must not hold the
 * caller past its timeout for long.
 */
export const FINAL_READ_GRACE_MS = 2_000;

const LIVE = new Set(['pending', 'active', 'schedule']);

/** The parts of a reader a wait uses. */
type WaitReader = Pick<QueueEventReader, 'watch' | 'caughtUp' | 'finished'>;

/**
 * One waitFor. It learns the outcome from the job's finishing event, and reads the job
 * (readView) whenever events may have been missed: at the start, when the reader
 * reconnected or found a gap, and once more before it reports a timeout. So an event
 * that was trimmed, or lost while the reader was away, costs a read, never the outcome.
 */
class JobWait implements EventWaiter {
  private readonly logger = new Logger('EchoMQ');
  private done = false;
  private readonly unwatch: () => void;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly reader: WaitReader,
    private readonly id: string,
    private readonly timeoutMs: number,
    private readonly readView: () => Promise<JobView | undefined>,
    private readonly settle: (outcome: Outcome) => void,
  ) {
    // Watch before the first read, so a transition between the two is never missed.
    this.unwatch = reader.watch(id, this);
    this.timer = setTimeout(() => this.timedOut(), timeoutMs);
    this.check().catch((error: Error) => this.finish({ kind: 'reject', error }));
  }

  onEvent(event: QueueEvent): void {
    const verdict = verdictOf(event, this.id);
    if (verdict) this.conclude(verdict).catch((error: Error) => this.finish({ kind: 'reject', error }));
  }

  recheck(): void {
    // A failed read here is not the outcome: later events, rechecks or the final read decide.
    this.check().catch((error: Error) =>
      this.logger.warn(`waitFor ${this.id}: re-reading the job failed: ${error.message}`),
    );
  }

  /** Reads the job; finishes the wait if the view (or, for a job that is gone, the stream) tells how it ended. */
  private async check(): Promise<void> {
    const view = await this.readView();
    if (this.done) return;
    const outcome = outcomeOfView(this.id, view);
    if (outcome) return this.finish(outcome);
    if (view) return; // still live: its finishing event is yet to come
    // Unknown: it may have just finished with no row kept, its event not yet delivered,
    // or delivered before this wait began (the reader remembers recent outcomes).
    await this.reader.caughtUp();
    if (this.done) return;
    const late = this.reader.finished(this.id);
    const verdict = late && verdictOf(late, this.id);
    await this.conclude(verdict || { kind: 'reject', error: new JobNotFoundError(this.id) });
  }

  private async conclude(verdict: Verdict): Promise<void> {
    if (this.done) return;
    if (verdict.kind !== 'read') return this.finish(verdict);
    const view = await this.readView();
    if (this.done) return;
    // A job that is live again (retried from dead since) makes this an event of an earlier
    // life, delivered after the wait began: the wait goes on for the current one.
    if (view && LIVE.has(view.state)) return;
    const outcome = outcomeOfView(this.id, view);
    if (!outcome && verdict.fallback.kind === 'resolve') {
      this.logger.warn(`waitFor ${this.id}: its result was left out of the event and its row is gone`);
    }
    this.finish(outcome ?? verdict.fallback);
  }

  private timedOut(): void {
    let grace: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((resolve) => (grace = setTimeout(resolve, FINAL_READ_GRACE_MS)));
    void Promise.race([this.check(), graceOver])
      .catch(() => undefined) // the read failed: the wait did time out
      .finally(() => {
        clearTimeout(grace);
        this.finish({ kind: 'reject', error: new WaitTimeoutError(this.id, this.timeoutMs) });
      });
  }

  private finish(outcome: Outcome): void {
    if (this.done) return;
    this.done = true;
    this.unwatch();
    clearTimeout(this.timer);
    this.settle(outcome);
  }
}

/**
 * Resolves with a job's result, or rejects with JobFailedError (dead), JobNotFoundError
 * (removed, or unknown once the reader has caught up with the stream) or
 * WaitTimeoutError. A job that finished shortly before the wait began still resolves.
 */
export function waitForJob(
  reader: WaitReader,
  id: string,
  timeoutMs: number,
  readView: () => Promise<JobView | undefined>,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    new JobWait(reader, id, timeoutMs, readView, (outcome) => {
      if (outcome.kind === 'resolve') resolve(outcome.value);
      else reject(outcome.error);
    });
  });
}
