import { randomBytes } from 'node:crypto';
import { Processor, QueueService } from '@app/echomq';
import { claimJobs } from '@app/echomq/internal';
import { EchoMqMetrics } from '@app/echomq/metrics';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { eventually } from './support/eventually';
import { parseExposition, valueOf } from './support/exposition';

const served = uniqueQueue('reaper-host');

/** Only there so the application runs a reaper (an application without processors runs none). */
@Processor(served)
class ReaperHost {
  process() {
    return 'served';
  }
}

describe("metrics of the reaper: the expired leases this process's reaper took back", () => {
  it('counts leases reaped to pending and to dead, and the scripts count them in Redis', async () => {
    const app = await bootApp([ReaperHost], { keyPrefix: `rea-${randomBytes(4).toString('hex')}` });
    try {
      const queues = app.get(QueueService);
      const metrics = app.get(EchoMqMetrics);
      // A queue nobody here serves: its jobs are claimed by hand, by a "worker" that then vanishes.
      const queue = uniqueQueue('reaped');
      await queues.enqueue(queue, 'attempts left');
      await queues.enqueue(queue, 'last attempt', { maxAttempts: 1 });
      const claim = await claimJobs(queues.context(queue), {
        count: 2,
        leaseMs: 100,
        claimantPrefix: 'gone-1',
      });
      expect(claim.jobs).toHaveLength(2);

      const scrape = await eventually(
        async () => parseExposition(await metrics.text()),
        (now) =>
          valueOf(now, 'echomq_reaped_leases_total', { queue, to: 'pending' }) === 1 &&
          valueOf(now, 'echomq_reaped_leases_total', { queue, to: 'dead' }) === 1,
        'both leases reaped by this process',
      );
      expect(valueOf(scrape, 'echomq_reaped_leases_total', { queue: served })).toBeUndefined();
      await eventually(
        async () => parseExposition(await metrics.text()),
        (now) =>
          valueOf(now, 'echomq_transitions_total', { queue, transition: 'reaped' }) === 1 &&
          valueOf(now, 'echomq_queue_jobs', { queue, set: 'dead' }) === 1,
        'the reap counted in Redis',
      );
    } finally {
      await app.close();
    }
  });
});
