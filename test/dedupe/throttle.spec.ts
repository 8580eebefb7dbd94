import type { INestApplication } from '@nestjs/common';
import { queueKeys, type QueueService } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { events, expectConsistent, metrics, serverNowMs } from '../support/assertions';
import { connect, uniqueQueue } from '../support/redis';
import { expectFlowConsistent } from '../lifecycle/support/flow';
import { producer } from './support';

describe('throttle: at most one job per key per window', () => {
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
    queue = uniqueQueue('throttle');
  });

  const keys = () => queueKeys(queue);

  it('creates the first job, answers later ones in the window with it, and creates again after', async () => {
    const throttle = { key: 'digest-42', windowMs: 60_000 };
    const first = await queues.submit(queue, { n: 1 }, { throttle });
    expect(first.outcome).toBe('created');
    expect((await queues.getJob(queue, first.id))?.state).toBe('pending');
    const ttl = await redis.pttl(keys().throttleKey('digest-42'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);

    const again = await queues.submit(queue, { n: 2 }, { throttle });
    expect(again).toEqual({ id: first.id, outcome: 'matched' });
    // The window's job is left as it was: a throttle never rewrites it.
    expect((await queues.getJob(queue, first.id))?.data).toEqual({ n: 1 });
    expect(await queues.enqueue(queue, { n: 3 }, { throttle })).toBe(first.id);
    expect((await queues.counts(queue)).pending).toBe(1);
    expect(await metrics(redis, keys())).toMatchObject({ enqueued: 1 });
    expect((await events(redis, keys())).map((e) => e.fields.type)).toEqual(['enqueued']);

    // Time passes: the window ends (its key expires).
    await redis.del(keys().throttleKey('digest-42'));
    const next = await queues.submit(queue, { n: 4 }, { throttle });
    expect(next.outcome).toBe('created');
    expect(next.id).not.toBe(first.id);
    expect((await queues.counts(queue)).pending).toBe(2);
    await expectConsistent(redis, keys());
  });

  it('matches for the whole window, whatever became of the job', async () => {
    const throttle = { key: 'gone', windowMs: 60_000 };
    const first = await queues.submit(queue, 1, { throttle });
    await queues.remove(queue, first.id);
    expect(await queues.submit(queue, 2, { throttle })).toEqual({ id: first.id, outcome: 'matched' });
    expect(await queues.counts(queue)).toMatchObject({ pending: 0, schedule: 0 });
  });

  it('places the job as usual: delayed into schedule, lanes and priorities into their pending sets', async () => {
    const before = await serverNowMs(redis);
    const delayed = await queues.submit(queue, 1, {
      delayMs: 30_000,
      throttle: { key: 'later', windowMs: 1_000 },
    });
    expect(Number(await redis.zscore(keys().schedule, delayed.id))).toBeGreaterThanOrEqual(before + 30_000);
    const at = new Date(before + 45_000);
    const timed = await queues.submit(queue, 2, { runAt: at, throttle: { key: 'at', windowMs: 1_000 } });
    expect(Number(await redis.zscore(keys().schedule, timed.id))).toBe(at.getTime());
    const laned = await queues.submit(queue, 3, {
      lane: 'tenant-b',
      priority: 4,
      maxAttempts: 2,
      timeoutMs: 5_000,
      backoff: { type: 'fixed', delayMs: 10 },
      name: 'digest',
      throttle: { key: 'laned', windowMs: 1_000 },
    });
    expect(await redis.zscore(keys().pendingOf('tenant-b', 4), laned.id)).toBe('0');
    expect(await queues.getJob(queue, laned.id)).toMatchObject({
      name: 'digest',
      lane: 'tenant-b',
      priority: 4,
      maxAttempts: 2,
      timeoutMs: 5_000,
      backoff: { type: 'fixed', delayMs: 10 },
    });
    expect((await queues.lanes(queue)).map((lane) => lane.lane)).toContain('tenant-b');
    await expectFlowConsistent(redis, keys());
  });

  it.each([
    ['no options', {}],
    [
      'every option',
      {
        name: '0',
        maxAttempts: 4,
        lane: 'l-1',
        priority: 9,
        timeoutMs: 9,
        backoff: { type: 'fixed', delayMs: 1 },
      },
    ],
    ['the default lane and level 0, given', { lane: 'default', priority: 0 }],
  ] as const)('writes the row enqueue writes, with %s', async (_what, options) => {
    const data = { payload: 'p'.repeat(100) };
    const plain = await queues.enqueue(queue, data, options);
    const { id } = await queues.submit(queue, data, {
      ...options,
      throttle: { key: 'row', windowMs: 1_000 },
    });
    expect(await redis.hgetall(keys().job(id))).toEqual(await redis.hgetall(keys().job(plain)));
  });

  it('keeps throttle and debounce keys apart even when they share a name', async () => {
    const throttled = await queues.submit(queue, 1, { throttle: { key: 'same', windowMs: 60_000 } });
    const debounced = await queues.submit(queue, 2, { debounce: { key: 'same', delayMs: 60_000 } });
    expect([throttled.outcome, debounced.outcome]).toEqual(['created', 'created']);
    expect(debounced.id).not.toBe(throttled.id);
  });
});
