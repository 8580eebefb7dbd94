import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  InvalidArgumentError,
  QueueService,
  partitionTagOf,
  queueKeys,
  queueRegistryKey,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

/** Writes through a partition's own name: only to partitions the queue has. */
describe('a partition named directly for a write that creates work', () => {
  let redis: Redis;
  let app: INestApplication;
  let queues: QueueService;
  const queue = uniqueQueue('direct-w');
  const plain = uniqueQueue('direct-plain');

  beforeAll(async () => {
    redis = connect();
    app = await bootApp([], { queues: { [queue]: { partitions: 2 } } });
    queues = app.get(QueueService);
    await queues.enqueue(plain, 'an unpartitioned queue');
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
  });

  /** Refused with InvalidArgumentError, no key of the physical queue written, nor its name registered. */
  async function refusedUnsent(physical: string, call: () => Promise<unknown>): Promise<void> {
    await expect(call()).rejects.toThrow(InvalidArgumentError);
    expect(await redis.keys(`${queueKeys(physical).base}*`)).toEqual([]);
    expect(await redis.sismember(queueRegistryKey(), physical)).toBe(0);
  }

  it('is refused past the partitions the queue has, before anything is sent', async () => {
    const past = `${queue}#7`;
    await refusedUnsent(past, () => queues.enqueue(past, { lost: true }));
    await refusedUnsent(past, () => queues.enqueueMany(past, [{ data: 1 }, { data: 2 }]));
    await refusedUnsent(past, () => queues.submit(past, 'x', { idempotencyKey: 'k' }));
    await refusedUnsent(past, () => queues.submit(past, 'x', { debounce: { key: 'd', delayMs: 1_000 } }));
    await refusedUnsent(past, () => queues.upsertSchedule(past, 'hourly', { everyMs: 3_600_000 }));
    // The first index past the span: #2 of a queue of two.
    await refusedUnsent(`${queue}#2`, () => queues.enqueue(`${queue}#2`, 'one past'));
    await expect(queues.enqueue(past, 1)).rejects.toThrow(
      /names partition 7 of queue .* has partitions 0 to 1/,
    );
    // A queue that is not partitioned has no partition to name.
    await refusedUnsent(`${plain}#0`, () => queues.enqueue(`${plain}#0`, 'none'));
    await expect(queues.enqueue(`${plain}#0`, 1)).rejects.toThrow(/is not partitioned/);
    expect((await queues.counts(queue)).pending).toBe(0);
  });

  it('is taken by a partition the queue has, and reads and controls of any partition stay allowed', async () => {
    const id = await queues.enqueue(`${queue}#1`, 'direct');
    expect(partitionTagOf(id)).toBe(1);
    expect(await queues.getJob(queue, id)).toMatchObject({ state: 'pending', data: 'direct' });
    const past = `${queue}#7`;
    expect(await queues.counts(past)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await queues.getJob(past, id)).toBeUndefined();
    expect(await queues.browse(past, 'pending')).toEqual([]);
    await expect(queues.drain(past)).resolves.toBe(0);
  });

  it('is taken by a draining partition: a lowered count keeps the most the queue had', async () => {
    const lowered = uniqueQueue('direct-lowered');
    const three = await bootApp([], { queues: { [lowered]: { partitions: 3 } } });
    try {
      await three.get(QueueService).enqueue(lowered, 'recorded with 3');
      const one = await bootApp([], { queues: { [lowered]: { partitions: 1 } } });
      try {
        const back = one.get(QueueService);
        expect(await back.partitionLayout(lowered)).toMatchObject({ count: 1, partitioned: true });
        const id = await back.enqueue(`${lowered}#2`, 'to a draining partition');
        expect(await back.getJob(lowered, id)).toMatchObject({ data: 'to a draining partition' });
        await expect(back.enqueue(`${lowered}#3`, 'past it')).rejects.toThrow(InvalidArgumentError);
      } finally {
        await one.close();
      }
    } finally {
      await three.close();
    }
  });
});
