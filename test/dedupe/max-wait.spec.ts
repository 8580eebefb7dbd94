import type { INestApplication } from '@nestjs/common';
import { queueKeys, type QueueService } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { serverNowMs } from '../support/assertions';
import { connect, uniqueQueue } from '../support/redis';
import { producer } from './support';

const DAY = 24 * 3_600_000;

/** debounce.maxWaitMs: the cap the creating call sets holds for the job's life. */
describe('debounce: the first call decides the max wait', () => {
  let redis: Redis;
  let app: INestApplication;
  let queues: QueueService;
  let queue: string;

  beforeAll(async () => {
    redis = connect();
    ({ app, queues } = await producer());
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
  });
  beforeEach(() => {
    queue = uniqueQueue('debounce-cap');
  });

  const keys = () => queueKeys(queue);
  const runAt = async (id: string) => Number(await redis.zscore(keys().schedule, id));

  /** Time passes for the waiting job: `msLeft` of its max wait are left, and its run-at is later than that. */
  async function nearDeadline(id: string, msLeft: number): Promise<number> {
    const deadline = (await serverNowMs(redis)) + msLeft;
    await redis.hset(keys().job(id), 'dm', deadline);
    return deadline;
  }

  it('a later call without maxWaitMs does not lift the cap, one with a larger value does not extend it', async () => {
    const capped = { key: 'k', delayMs: 10_000, maxWaitMs: 15_000 };
    const { id } = await queues.submit(queue, 'a', { debounce: capped });
    const deadline = await nearDeadline(id, 3_000);

    const uncapped = await queues.submit(queue, 'b', { debounce: { key: 'k', delayMs: 10_000 } });
    expect(uncapped).toEqual({ id, outcome: 'replaced' });
    expect(await runAt(id)).toBe(deadline);

    const longer = { key: 'k', delayMs: 10_000, maxWaitMs: 30 * DAY };
    expect(await queues.submit(queue, 'c', { debounce: longer })).toEqual({ id, outcome: 'replaced' });
    expect(await runAt(id)).toBe(deadline);
    expect(await redis.hget(keys().job(id), 'dm')).toBe(String(deadline));
    expect((await queues.getJob(queue, id))?.data).toBe('c');
  });

  it('a job created without maxWaitMs has no cap, whatever later calls say', async () => {
    const { id } = await queues.submit(queue, 1, { debounce: { key: 'free', delayMs: 60_000 } });
    expect(await redis.hexists(keys().job(id), 'dm')).toBe(0);
    // Time passes: it was first enqueued 30 s ago.
    await redis.hincrby(keys().job(id), 'df', -30_000);
    const before = await serverNowMs(redis);
    const later = { key: 'free', delayMs: 60_000, maxWaitMs: 60_000 };
    expect(await queues.submit(queue, 2, { debounce: later })).toEqual({ id, outcome: 'replaced' });
    // Pushed to now + delayMs, not held at its first enqueue + the later call's maxWaitMs.
    expect(await runAt(id)).toBeGreaterThanOrEqual(before + 60_000);
    expect(await redis.hexists(keys().job(id), 'dm')).toBe(0);
  });
});
