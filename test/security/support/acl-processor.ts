import { Processor, UnrecoverableError, type Job } from '@app/echomq';
import { DeferredMap } from '../../worker/fixtures/support';
import { uniqueQueue } from '../../support/redis';

/** The queue the worker of the api's ACL test serves; the api also drives a queue nobody serves. */
export const WORKED_QUEUE = uniqueQueue('acl-worked');

/** Handlers that started, and handlers whose AbortSignal fired, by job id. */
export const started = new DeferredMap();
export const aborted = new DeferredMap();

export type TourJob = { kind: 'ok' } | { kind: 'doom' } | { kind: 'hold' };

/**
 * The worker side of the api's tour: completes, dies once (so the api has a dead job to
 * retry), or holds its job until the job is removed (so the api cancels a running job).
 */
// Completed rows are kept a while, so the api reads a finished job's state as 'completed'.
@Processor(WORKED_QUEUE, { leaseMs: 5_000, retainCompletedMs: 60_000 })
export class TourProcessor {
  async process(job: Job<TourJob>): Promise<string> {
    started.get(job.id).resolve();
    switch (job.data.kind) {
      case 'doom':
        if (job.attempt === 1) throw new UnrecoverableError('doomed');
        return 'retried';
      case 'hold':
        if (!job.signal.aborted)
          await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
        aborted.get(job.id).resolve();
        return 'aborted';
      default:
        return 'ok';
    }
  }
}
