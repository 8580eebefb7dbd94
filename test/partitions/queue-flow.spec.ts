import type { INestApplication } from '@nestjs/common';
import { InvalidArgumentError, QueueService, readLimits, type FlowLimits } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { usePartitionedApp } from './support/partitioned-app';
import { partitionNames } from './support/physical';

const PARTITIONS = 3;
const UNSET: FlowLimits = {
  rateLimit: null,
  globalConcurrency: null,
  laneConcurrency: null,
  laneRateLimit: null,
};

describe('flow control of a partitioned queue', () => {
  const suite = usePartitionedApp({ defaults: { partitions: PARTITIONS } });

  const partitionsOf = (queue: string) => partitionNames(queue, PARTITIONS);

  it('pauses and resumes every partition; it is paused only when every partition is', async () => {
    const queue = uniqueQueue('pause');
    await suite.queues.enqueue(queue, 1);
    expect(await suite.queues.isPaused(queue)).toBe(false);
    await suite.queues.pause(queue);
    expect(await suite.queues.isPaused(queue)).toBe(true);
    for (const physical of [queue, ...partitionsOf(queue)])
      expect(await suite.queues.isPaused(physical)).toBe(true);
    await suite.queues.resume(`${queue}#1`);
    expect(await suite.queues.isPaused(queue)).toBe(false);
    await suite.queues.pause(queue);
    await suite.queues.resume(queue);
    for (const physical of [queue, ...partitionsOf(queue)])
      expect(await suite.queues.isPaused(physical)).toBe(false);
    expect(await suite.queues.isPaused(queue)).toBe(false);
  });

  it('splits globalConcurrency and rateLimit over every physical queue and reads the total back', async () => {
    const queue = uniqueQueue('limits');
    await suite.queues.setLimits(queue, {
      globalConcurrency: 10,
      rateLimit: { max: 100, windowMs: 1_000 },
      laneConcurrency: 2,
    });
    expect(await suite.queues.getLimits(queue)).toEqual({
      ...UNSET,
      globalConcurrency: 10,
      rateLimit: { max: 100, windowMs: 1_000 },
      laneConcurrency: 2,
    });
    // Split over the three partitions; the queue itself (where jobs from before it was
    // partitioned drain under the limits they had) gets no share.
    const shares = await Promise.all(
      [queue, ...partitionsOf(queue)].map((physical) => readLimits(suite.queues.context(physical))),
    );
    expect(shares.map((limits) => limits.globalConcurrency)).toEqual([null, 4, 3, 3]);
    expect(shares.map((limits) => limits.rateLimit)).toEqual([
      null,
      { max: 34, windowMs: 1_000 },
      { max: 33, windowMs: 1_000 },
      { max: 33, windowMs: 1_000 },
    ]);
    // Lane limits are not split: a lane lives in one partition.
    expect(shares.map((limits) => limits.laneConcurrency)).toEqual([null, 2, 2, 2]);

    // A limit left out stays; null clears one in every partition.
    await suite.queues.setLimits(queue, { globalConcurrency: null });
    expect(await suite.queues.getLimits(queue)).toMatchObject({
      globalConcurrency: null,
      rateLimit: { max: 100 },
    });
    for (const physical of partitionsOf(queue)) {
      expect((await suite.queues.getLimits(physical)).globalConcurrency).toBeNull();
    }
  });

  it('refuses a globalConcurrency below the number of partitions, writing nothing', async () => {
    const queue = uniqueQueue('refuse');
    await suite.queues.setLimits(queue, { globalConcurrency: 9, laneConcurrency: 4 });
    const before = await Promise.all(
      [queue, ...partitionsOf(queue)].map((physical) => suite.queues.getLimits(physical)),
    );
    await expect(suite.queues.setLimits(queue, { globalConcurrency: 2, laneConcurrency: 7 })).rejects.toThrow(
      InvalidArgumentError,
    );
    // Three partitions: 2 would leave one of them nothing; 3 is one each.
    await expect(suite.queues.setLimits(queue, { globalConcurrency: 2 })).rejects.toThrow(
      /globalConcurrency 2 cannot be split over 3 partitions/,
    );
    await expect(suite.queues.setLimits(queue, { rateLimit: { max: 1, windowMs: 1_000 } })).rejects.toThrow(
      InvalidArgumentError,
    );
    const after = await Promise.all(
      [queue, ...partitionsOf(queue)].map((physical) => suite.queues.getLimits(physical)),
    );
    expect(after).toEqual(before);
    expect(await suite.queues.getLimits(queue)).toEqual({
      ...UNSET,
      globalConcurrency: 9,
      laneConcurrency: 4,
    });

    // On a queue never written to, the refusal leaves no key behind.
    const fresh = uniqueQueue('refuse-fresh');
    await expect(suite.queues.setLimits(fresh, { globalConcurrency: 1 })).rejects.toThrow(
      /cannot be split over 3 partitions/,
    );
    expect(await suite.redis.keys(`emq:{${fresh}*`)).toEqual([]);
    expect(await suite.queues.getLimits(fresh)).toEqual(UNSET);
  });

  describe('limits configured for the queue', () => {
    const configured = uniqueQueue('configured');
    let producer: INestApplication;
    let admin: INestApplication;

    beforeAll(async () => {
      producer = await bootApp([], {
        queues: {
          [configured]: {
            partitions: PARTITIONS,
            globalConcurrency: 9,
            rateLimit: { max: 30, windowMs: 1_000 },
          },
        },
      });
      admin = await bootApp([]);
    });
    afterAll(async () => {
      await producer.close();
      await admin.close();
    });

    it('are split over the partitions at boot, and an admin change made later is not undone by the first enqueues', async () => {
      const mine = producer.get(QueueService);
      expect(await mine.getLimits(configured)).toMatchObject({
        globalConcurrency: 9,
        rateLimit: { max: 30, windowMs: 1_000 },
      });
      // 9 over [q#0, q#1, q#2]: 3, 3, 3.
      expect((await mine.getLimits(configured)).globalConcurrency).toBe(9);
      expect((await mine.getLimits(`${configured}#0`)).globalConcurrency).toBe(3);
      // An admin in another process changes the limit before the producer's first enqueue.
      await admin.get(QueueService).setLimits(configured, { globalConcurrency: 30 });
      for (let n = 0; n < PARTITIONS; n++) await mine.enqueue(configured, { n });
      expect((await mine.getLimits(configured)).globalConcurrency).toBe(30);
      const shares = await Promise.all(
        [configured, ...partitionsOf(configured)].map((physical) => readLimits(mine.context(physical))),
      );
      expect(shares.map((limits) => limits.globalConcurrency)).toEqual([null, 10, 10, 10]);
    });
  });
});
