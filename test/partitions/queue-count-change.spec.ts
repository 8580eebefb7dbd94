import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  QueueService,
  partitionRegistryKey,
  partitionTagOf,
  queueKeys,
  readLimits,
  type JobId,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

/** Changing a live queue's partition count: new jobs spread over the new count, old partitions stay read. */
describe('a partitioned queue whose count drops from 3 to 2', () => {
  const queue = uniqueQueue('recount');
  let redis: Redis;
  let three: INestApplication;
  let two: INestApplication;
  let threeQueues: QueueService;
  let twoQueues: QueueService;
  const before: JobId[] = [];

  beforeAll(async () => {
    redis = connect();
    three = await bootApp([], { queues: { [queue]: { partitions: 3 } } });
    threeQueues = three.get(QueueService);
    for (let n = 0; n < 6; n++) before.push(await threeQueues.enqueue(queue, { n, era: 3 }));
    two = await bootApp([], { queues: { [queue]: { partitions: 2 } } });
    twoQueues = two.get(QueueService);
  });
  afterAll(async () => {
    await two.close();
    await three.close();
    await redis.quit();
  });

  const byTag = (ids: readonly JobId[]) => ids.map((id) => partitionTagOf(id)!);

  it('spreads new jobs over #0 and #1 only, while the jobs of #2 are still counted, browsed and found', async () => {
    expect(new Set(byTag(before))).toEqual(new Set([0, 1, 2]));
    const layout = await twoQueues.partitionLayout(queue);
    expect(layout.count).toBe(2);
    expect(layout.physical).toEqual([queue, `${queue}#0`, `${queue}#1`, `${queue}#2`]);
    const after: JobId[] = [];
    for (let n = 0; n < 6; n++) after.push(await twoQueues.enqueue(queue, { n, era: 2 }));
    expect(byTag(after).sort()).toEqual([0, 0, 0, 1, 1, 1]);
    expect(await redis.hgetall(partitionRegistryKey())).toMatchObject({
      [queue]: '2',
      [`${queue}#max`]: '3',
    });

    const all = [...before, ...after];
    expect((await twoQueues.counts(queue)).pending).toBe(12);
    expect(await twoQueues.browse(queue, 'pending', { limit: 100 })).toEqual([...all].sort().reverse());
    const leftBehind = before.find((id) => partitionTagOf(id) === 2)!;
    expect(await twoQueues.getJob(queue, leftBehind)).toMatchObject({ state: 'pending', data: { era: 3 } });
    expect(await redis.zcard(queueKeys(`${queue}#2`).pending)).toBe(2);
  });

  it('an undeclaring process, booted after the registry says 2, does the same', async () => {
    const reader = await bootApp([]);
    try {
      const queues = reader.get(QueueService);
      expect(await queues.partitionLayout(queue)).toMatchObject({
        count: 2,
        physical: [queue, `${queue}#0`, `${queue}#1`, `${queue}#2`],
      });
      const ids = await Promise.all(
        [0, 1, 2, 3].map(async (n) => queues.enqueue(queue, { n, era: 'reader' })),
      );
      for (const tag of byTag(ids)) expect(tag).toBeLessThan(2);
      const counted = (await queues.counts(queue)).pending;
      expect(counted).toBe((await twoQueues.counts(queue)).pending);
      const browsed = await queues.browse(queue, 'pending', { limit: 1_000 });
      expect(browsed).toHaveLength(counted);
      for (const id of before) expect(browsed).toContain(id);
    } finally {
      await reader.close();
    }
  });

  it('splits a limit over every partition, the draining one included, so the shares add up to it', async () => {
    await twoQueues.setLimits(queue, { globalConcurrency: 11 });
    expect((await twoQueues.getLimits(queue)).globalConcurrency).toBe(11);
    // In the layout's order [q, q#0, q#1, q#2]: 11 over the three partitions is 4, 4 and 3; the queue
    // itself, holding only jobs from before it was partitioned, gets no share.
    const layout = await twoQueues.partitionLayout(queue);
    const shares = await Promise.all(
      layout.physical.map(
        async (physical) => (await readLimits(twoQueues.context(physical))).globalConcurrency,
      ),
    );
    expect(shares).toEqual([null, 4, 4, 3]);
    expect(shares.reduce((sum, share) => sum! + (share ?? 0), 0)).toBe(11);
  });
});
