import { Processor, RateLimitedError, Schedule, UnrecoverableError, type Job } from '@app/echomq';
import { uniqueQueue } from '../../support/redis';
import { DeferredMap } from '../../worker/fixtures/support';

/*
 * The worker side of the worker ACL test (test/queue/redis-acl.spec.ts): one job kind per
 * transition or command family, so that every command the worker line grants is sent.
 */

/** The queue the worker ACL test serves, and one whose only jobs are a declared schedule's. */
export const QUEUE = uniqueQueue('acl');
export const SCHEDULED = uniqueQueue('acl-scheduled');

/** Jobs whose handler waits for something the test observes; the test opens them. */
export const gates = new Map<string, () => void>();
function gate(id: string): Promise<void> {
  return new Promise((resolve) => gates.set(id, resolve));
}

/** Running jobs removed by the test: their handlers resolve these once their AbortSignal fired. */
export const aborted = new DeferredMap();

// deadMaxAgeMs: trimming dead by age is a command of its own (ZLEXCOUNT) in the scripts that kill.
@Processor(QUEUE, {
  leaseMs: 3_000,
  backoff: { type: 'fixed', delayMs: 0 },
  deadMaxAgeMs: 86_400_000,
  retainCompletedMs: 60_000,
})
export class AclProcessor {
  async process(job: Job<{ kind: string }>) {
    switch (job.data.kind) {
      case 'flaky': // fail -> schedule -> promoted -> claimed again
        if (job.attempt === 1) throw new Error('first attempt fails');
        return 'recovered';
      case 'doom': // straight to dead; succeeds once retried
        if (job.attempt === 1) throw new UnrecoverableError('doomed');
        return 'retried';
      case 'limited': // a throttle of its lane, then it runs again
        if (job.attempt === 1) throw new RateLimitedError(50, { scope: 'lane' });
        return 'throttled';
      case 'held': // a hold of the whole queue, which claims read while it lasts
        if (job.attempt === 1) throw new RateLimitedError(50);
        return 'held';
      case 'slow': // holds its lease until a heartbeat extended it
        await job.progress({ step: 1 });
        await gate(job.id);
        return 'extended';
      case 'hold': // runs until it is removed: the cancels stream aborts it
        await job.log('holding');
        // (the removal may have aborted it while the log line was written)
        if (!job.signal.aborted)
          await new Promise((resolve) => job.signal.addEventListener('abort', resolve));
        aborted.get(job.id).resolve();
        return 'aborted';
      default:
        return 'ok';
    }
  }
}

/** A declared schedule: upserted at boot, its occurrences promoted, run and advanced by the worker. */
export const scheduledRuns: string[] = [];
@Processor(SCHEDULED)
@Schedule('tick', { everyMs: 100 })
export class ScheduledProcessor {
  process(job: Job) {
    scheduledRuns.push(job.id);
  }
}
