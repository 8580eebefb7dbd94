import type { Logger } from '@nestjs/common';
import type { SettledOutcome } from '../observability/runtime-hooks';
import type { RunningJob } from './running-job';
import type { RuntimeObserver } from './runtime-observer';

/**
 * Tells the observer how each job's settlement ended, once per job, with how long its handler
 * ran: before the worker event, so a listener of that event already finds it counted. The call
 * is guarded here too (not only by RuntimeHooksRegistry, which any observer may stand in for):
 * an observer that throws is logged, and the job's event still goes out.
 */
export class SettlementReports {
  constructor(
    private readonly queue: string,
    private readonly observer: Pick<RuntimeObserver, 'settled'>,
    private readonly logger: Logger,
  ) {}

  /** The job's handler returned, threw or was timed out after `ms`: a report of it can go now. */
  handlerReturned(running: RunningJob, ms: number): void {
    running.handlerMs = ms;
  }

  /** Reports the job's outcome, unless it was reported already (its handlerMs absent if it never returned). */
  report(running: RunningJob, outcome: SettledOutcome): void {
    if (running.reported) return;
    running.reported = true;
    try {
      this.observer.settled(this.queue, running.record, outcome, running.handlerMs);
    } catch (error) {
      this.logger.error(`A settled observer of ${this.queue} threw: ${(error as Error).message}`);
    }
  }
}
