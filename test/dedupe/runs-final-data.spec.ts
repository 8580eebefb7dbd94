import type { INestApplication } from '@nestjs/common';
import { QueueService, queueKeys, type Job } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { backdate } from '../support/assertions';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll, processorClass } from '../worker/fixtures/support';

describe('a debounced job runs once, with the data and name of the last enqueue', () => {
  let redis: Redis;
  let app: INestApplication | undefined;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await closeAll([app]);
    await redis.quit();
  });

  it('a worker runs the replaced job with its final data', async () => {
    const queue = uniqueQueue('debounce-run');
    const runs: { id: string; name: string; data: unknown }[] = [];
    const Proc = processorClass(queue, { retainCompletedMs: 60_000 }, (job: Job) => {
      runs.push({ id: job.id, name: job.name, data: job.data });
      return job.data;
    });
    app = await bootApp([Proc], { shutdownGraceMs: 500 });
    const queues = app.get(QueueService);
    const debounce = { key: 'profile-7', delayMs: 60_000, maxWaitMs: 120_000 };
    const first = await queues.submit(queue, { v: 1 }, { debounce });
    await queues.submit(queue, { v: 2 }, { debounce, name: '' });
    const last = await queues.submit(queue, { v: 3, big: 'z'.repeat(300) }, { debounce });
    expect(last).toEqual({ id: first.id, outcome: 'replaced' });
    // Time passes: the run-at is reached; the reaper promotes it and the loop runs it.
    const done = queues.waitFor(queue, first.id, 20_000);
    await backdate(redis, queueKeys(queue).schedule, first.id);
    expect(await done).toEqual({ v: 3, big: 'z'.repeat(300) });
    expect(runs).toEqual([{ id: first.id, name: '', data: { v: 3, big: 'z'.repeat(300) } }]);
    expect(await queues.counts(queue)).toMatchObject({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });
});
