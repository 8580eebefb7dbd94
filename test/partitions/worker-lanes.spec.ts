import type { INestApplication } from '@nestjs/common';
import { ProcessorExplorer, QueueService, type Job } from '@app/echomq/internal';
import { bucketOf } from '@app/echomq/queue/partitions/partition-routing';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { closeAll, deferred, processorClass } from '../worker/fixtures/support';

/**
 * A lane lives in one partition (its name's hash), so its order and its cap are that partition's,
 * and hold for every worker: FIFO inside the lane, and laneConcurrency across processes.
 */
describe('lanes of a partitioned queue served by two workers', () => {
  const apps: INestApplication[] = [];
  afterAll(async () => {
    await closeAll(apps.splice(0));
  });

  it('claims each lane’s jobs in enqueue order, one at a time across both workers', async () => {
    const queue = uniqueQueue('wl');
    const lanes = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
    // The lanes spread over more than one partition, so the test covers several loops.
    expect(new Set(lanes.map((lane) => bucketOf(`lane:${lane}`, 3))).size).toBeGreaterThan(1);
    const perLane = 8;
    const total = lanes.length * perLane;
    /** What happened, in order, in this process: both workers run here. */
    const log: { lane: string; n: number; at: 'start' | 'end'; worker: string }[] = [];
    const running = new Map<string, number>();
    let overlap = false;
    const finished = deferred();
    let ended = 0;
    // The first six handlers wait until six run at once: one per lane (the cap), which takes both
    // workers (three each).
    const together = deferred();
    let started = 0;
    let concurrent = 0;
    const handler = (worker: string) => async (job: Job<{ n: number }>) => {
      const now = (running.get(job.lane) ?? 0) + 1;
      running.set(job.lane, now);
      if (now > 1) overlap = true;
      log.push({ lane: job.lane, n: job.data.n, at: 'start', worker });
      if (++concurrent === lanes.length) together.resolve();
      if (++started <= lanes.length) await together.promise;
      // A turn of the event loop inside the handler, so that other claims can happen meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
      concurrent -= 1;
      running.set(job.lane, running.get(job.lane)! - 1);
      log.push({ lane: job.lane, n: job.data.n, at: 'end', worker });
      if (++ended === total) finished.resolve();
      return job.data.n;
    };
    const options = {
      shutdownGraceMs: 200,
      queues: { [queue]: { partitions: 3, concurrency: 3, laneConcurrency: 1 } },
    };
    for (const worker of ['one', 'two']) {
      const app = await bootApp([processorClass(queue, {}, handler(worker))], options);
      apps.push(app);
      // Both paused to start with, so all jobs wait, then every lane is offered at once.
      await app.get(ProcessorExplorer).stopQueue(queue);
    }
    const queues = apps[0].get(QueueService);
    for (let n = 0; n < perLane; n++) {
      await queues.enqueueMany(
        queue,
        lanes.map((lane) => ({ data: { n }, lane })),
      );
    }
    for (const app of apps) app.get(ProcessorExplorer).startQueue(queue);
    await finished.promise;

    expect(overlap).toBe(false);
    for (const lane of lanes) {
      const starts = log
        .filter((entry) => entry.lane === lane && entry.at === 'start')
        .map((entry) => entry.n);
      expect(starts).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      // Each start comes after the previous job's end.
      const events = log.filter((entry) => entry.lane === lane).map((entry) => entry.at);
      expect(events).toEqual(Array.from({ length: perLane }, () => ['start', 'end']).flat());
    }
    // Both workers took part.
    expect(new Set(log.map((entry) => entry.worker))).toEqual(new Set(['one', 'two']));
  });
});
