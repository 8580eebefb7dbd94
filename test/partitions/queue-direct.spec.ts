import type { INestApplication } from '@nestjs/common';
import { z } from 'zod';
import {
  JobDataInvalidError,
  QueueService,
  completeJob,
  defineQueue,
  partitionTagOf,
  type JobId,
} from '@app/echomq/internal';
import { bucketOf } from '@app/echomq/queue/partitions/partition-routing';
import { claimSome } from '../support/claims';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

describe('a partition addressed by its own name', () => {
  const queue = uniqueQueue('direct');
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    app = await bootApp([], { queues: { [queue]: { partitions: 3 } } });
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
  });

  it('is a queue of its own, whose ids carry its index, and a part of the logical queue', async () => {
    const part = `${queue}#1`;
    expect(await queues.partitionLayout(part)).toEqual({
      queue: part,
      count: 1,
      physical: [part],
      partitioned: false,
    });
    // A lane that hashes elsewhere stays in the partition named: no routing, no split.
    let lane = 'x-0';
    for (let i = 1; bucketOf(`lane:${lane}`, 3) === 1; i++) lane = `x-${i}`;
    const ids: JobId[] = [
      await queues.enqueue(part, { n: 0 }),
      ...(await queues.enqueueMany(part, [{ data: { n: 1 } }, { data: { n: 2 }, lane }])),
      (await queues.submit(part, { n: 3 }, { idempotencyKey: 'k' })).id,
    ];
    for (const id of ids) expect(partitionTagOf(id)).toBe(1);
    expect(await queues.counts(part)).toEqual({ pending: 4, active: 0, schedule: 0, dead: 0 });
    expect(await queues.counts(`${queue}#0`)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await queues.browse(part, 'pending')).toEqual([...ids].reverse());
    expect(await queues.getJob(part, ids[2])).toMatchObject({ queue: part, data: { n: 2 }, lane });
    // The logical queue sees the same jobs, by its own name.
    expect((await queues.counts(queue)).pending).toBe(4);
    expect(await queues.getJob(queue, ids[0])).toMatchObject({ queue, data: { n: 0 } });
    expect(await queues.listQueues()).toContain(queue);
    expect(await queues.listQueues()).not.toContain(part);

    // A job of another partition is not there.
    const elsewhere = await queues.enqueue(`${queue}#2`, 'other');
    expect(await queues.getJob(part, elsewhere)).toBeUndefined();
    const [claim] = await claimSome(queues.context(`${queue}#2`));
    const done = queues.waitFor(`${queue}#2`, elsewhere, 5_000);
    await completeJob(queues.context(`${queue}#2`), claim, JSON.stringify('direct'), 0);
    await expect(done).resolves.toBe('direct');
  });

  it("checks the queue's data schema whichever partition is named", async () => {
    const Orders = defineQueue(uniqueQueue('typed'), { data: z.object({ sku: z.string() }) });
    const typed = await bootApp([], { queues: { [Orders.name]: { partitions: 3 } } });
    try {
      const queues = typed.get(QueueService);
      queues.queue(Orders);
      const part = `${Orders.name}#1`;
      await expect(queues.enqueue(part, { sku: 7 })).rejects.toBeInstanceOf(JobDataInvalidError);
      const id = await queues.enqueue(part, { sku: 'a' }, { delayMs: 60_000 });
      await expect(queues.update(part, id, { data: { sku: 8 } })).rejects.toBeInstanceOf(JobDataInvalidError);
      await expect(queues.update(Orders.name, id, { data: { sku: 8 } })).rejects.toBeInstanceOf(
        JobDataInvalidError,
      );
      expect((await queues.getJob(part, id))?.data).toEqual({ sku: 'a' });
      await expect(
        queues.upsertSchedule(part, 'nightly', { everyMs: 60_000 }, { data: { sku: 9 } }),
      ).rejects.toBeInstanceOf(JobDataInvalidError);
      expect(await queues.listSchedules(part)).toEqual([]);
    } finally {
      await typed.close();
    }
  });
});
