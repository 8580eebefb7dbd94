import type { INestApplication } from '@nestjs/common';
import { QueueService } from '@app/echomq';
import type { Redis } from 'ioredis';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

/** Concurrent enqueue calls of one turn of the event loop share one enqueue script call. */
describe('enqueue merging', () => {
  let redis: Redis;
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    redis = connect();
    app = await bootApp([]);
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
  });

  async function enqueuedEvents(queue: string): Promise<string[][]> {
    const entries = await redis.xrange(`emq:{${queue}}:events`, '-', '+');
    return entries
      .map(([, fields]) =>
        Object.fromEntries(fields.flatMap((_, i) => (i % 2 ? [] : [[fields[i], fields[i + 1]]]))),
      )
      .filter((event) => event.type === 'enqueued')
      .map((event) => String(event.ids).split(','));
  }

  it('sends calls made together as one script call, each caller getting its own id in order', async () => {
    const queue = uniqueQueue('merge');
    // The first enqueue of a queue also registers it (a round trip of its own), which would
    // spread the calls below over several turns; register it first.
    const [warm] = await Promise.all([queues.enqueue(queue, 'warm')]);
    await queues.remove(queue, warm);
    const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => queues.enqueue(queue, { i })));
    expect(new Set(ids).size).toBe(50);
    expect((await enqueuedEvents(queue)).slice(1)).toEqual([ids]);
    expect(await queues.browse(queue, 'pending', { limit: 50 })).toEqual([...ids].reverse());
    const views = await queues.listJobs(queue, 'pending', { limit: 50 });
    expect(views.map((view) => view.data)).toEqual(Array.from({ length: 50 }, (_, i) => ({ i: 49 - i })));
  });

  it('resolves an idempotency key repeated across merged calls to the first job', async () => {
    const queue = uniqueQueue('merge-idem');
    const [first, second, other] = await Promise.all([
      queues.enqueue(queue, 1, { idempotencyKey: 'order-7' }),
      queues.enqueue(queue, 2, { idempotencyKey: 'order-7' }),
      queues.enqueue(queue, 3),
    ]);
    expect(second).toBe(first);
    expect(other).not.toBe(first);
    expect((await queues.counts(queue)).pending).toBe(2);
  });

  it('keeps separate calls in separate outcomes when one call is refused before sending', async () => {
    const queue = uniqueQueue('merge-bad');
    const results = await Promise.allSettled([
      queues.enqueue(queue, 1),
      queues.enqueue(queue, 2, { delayMs: -1 }),
      queues.enqueueMany(queue, [{ data: 3 }, { data: 4 }]),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((await queues.counts(queue)).pending).toBe(3);
  });
});
