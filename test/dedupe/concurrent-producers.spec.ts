import type { INestApplication } from '@nestjs/common';
import { QueueService, queueKeys, type EnqueueResult } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { rowIds } from '../faults/support/faults';
import { events } from '../support/assertions';
import { connect, uniqueQueue } from '../support/redis';
import { openMonitor } from '../support/monitor';
import { producer } from './support';

const PRODUCERS = 5;
const EACH = 10;
const TOTAL = PRODUCERS * EACH;
/** As MONITOR shows a keyed enqueue: verb, script, numkeys, 7 keys (the 7th, at 9, the debounce key), ARGV; ARGV[8] is the data. */
const DATA_AT = 3 + 7 + 7;

/**
 * Several processes (one QueueService and connection each) fire submits with one key at once.
 * Redis runs the scripts one after the other; MONITOR shows that order, so the test knows which
 * data Redis applied last.
 */
describe('debounce and throttle under concurrent producers', () => {
  let redis: Redis;
  const apps: INestApplication[] = [];
  const services: QueueService[] = [];

  beforeAll(async () => {
    redis = connect();
    for (let p = 0; p < PRODUCERS; p++) {
      const { app, queues } = await producer();
      apps.push(app);
      services.push(queues);
    }
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await redis.quit();
  });

  /**
   * Resolves with the data argument of every keyed enqueue with debounce key `key`, in the order
   * Redis ran them. (Matched by the key: MONITOR shows a script's text escaped, so an EVAL of
   * it does not equal the script.)
   */
  async function watchKeyedCalls(
    key: string,
    count: number,
  ): Promise<{ applied: Promise<string[]>; stop(): void }> {
    const monitor = await openMonitor();
    const seen: string[] = [];
    const applied = new Promise<string[]>((resolve) => {
      monitor.on('monitor', (_time: string, args: string[]) => {
        const verb = args[0]?.toLowerCase();
        if ((verb !== 'eval' && verb !== 'evalsha') || args[9] !== key) return;
        seen.push(args[DATA_AT]);
        if (seen.length === count) resolve(seen);
      });
    });
    return { applied, stop: () => monitor.disconnect() };
  }

  /** Every producer submits EACH jobs, all at the same time; each result with the data it sent. */
  function fireAll(
    queue: string,
    options: Parameters<QueueService['submit']>[2],
  ): Promise<(EnqueueResult & { sent: { producer: number; n: number } })[]> {
    const calls: Promise<EnqueueResult & { sent: { producer: number; n: number } }>[] = [];
    for (let i = 0; i < EACH; i++) {
      services.forEach((queues, p) => {
        const sent = { producer: p, n: p * EACH + i };
        calls.push(queues.submit(queue, sent, options).then((result) => ({ ...result, sent })));
      });
    }
    return Promise.all(calls);
  }

  it('debounce: one waiting job, carrying the data Redis applied last, named by every result', async () => {
    const queue = uniqueQueue('debounce-race');
    const watch = await watchKeyedCalls(queueKeys(queue).debounce('race'), TOTAL);
    try {
      const results = await fireAll(queue, { debounce: { key: 'race', delayMs: 60_000 } });
      const applied = await watch.applied;

      const ids = new Set(results.map((r) => r.id));
      expect(ids.size).toBe(1);
      const [id] = ids;
      const created = results.filter((r) => r.outcome === 'created');
      expect(created).toHaveLength(1);
      // The call that created the job is the one Redis ran first.
      expect(created[0].sent).toEqual(JSON.parse(applied[0]));
      expect(results.filter((r) => r.outcome === 'replaced')).toHaveLength(TOTAL - 1);

      const keys = queueKeys(queue);
      expect(await redis.zrange(keys.schedule, 0, -1)).toEqual([id]);
      expect(await rowIds(redis, queue)).toEqual([id]);
      const data = (await services[0].getJob(queue, id))?.data;
      expect(data).toEqual(JSON.parse(applied[TOTAL - 1]));
      const types = (await events(redis, keys)).map((e) => e.fields.type);
      expect(types).toEqual(['enqueued', ...Array<string>(TOTAL - 1).fill('debounced')]);
    } finally {
      watch.stop();
    }
  });

  it('throttle: one job, created once and matched by every other call', async () => {
    const queue = uniqueQueue('throttle-race');
    const results = await fireAll(queue, { throttle: { key: 'race', windowMs: 60_000 } });
    const ids = new Set(results.map((r) => r.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.outcome === 'created')).toHaveLength(1);
    expect(results.filter((r) => r.outcome === 'matched')).toHaveLength(TOTAL - 1);
    expect(await redis.zrange(queueKeys(queue).pending, 0, -1)).toEqual([...ids]);
    expect(await rowIds(redis, queue)).toEqual([...ids]);
  });
});
