import type { INestApplication } from '@nestjs/common';
import {
  claimJobs,
  completeJob,
  DEBOUNCE_KEY_MARGIN_MS,
  failJob,
  queueKeys,
  type QueueService,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { backdate, events, expectConsistent, metrics, serverNowMs } from '../support/assertions';
import { connect, scriptContext, uniqueQueue } from '../support/redis';
import { producer } from './support';

describe('debounce: a later enqueue with the key replaces the waiting job', () => {
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
    queue = uniqueQueue('debounce');
  });

  const keys = () => queueKeys(queue);
  const runAt = async (id: string) => Number(await redis.zscore(keys().schedule, id));

  it('creates a job that waits delayMs in schedule, with its key and first-enqueue time on its row', async () => {
    const before = await serverNowMs(redis);
    const result = await queues.submit(queue, { n: 1 }, { debounce: { key: 'user-1', delayMs: 60_000 } });
    const after = await serverNowMs(redis);
    expect(result.outcome).toBe('created');
    const score = await runAt(result.id);
    expect(score).toBeGreaterThanOrEqual(before + 60_000);
    expect(score).toBeLessThanOrEqual(after + 60_000);
    const row = await redis.hgetall(keys().job(result.id));
    expect(row.dk).toBe('user-1');
    expect(Number(row.df)).toBe(score - 60_000);
    expect(await redis.get(keys().debounce('user-1'))).toBe(result.id);
    // The key lives a little past the run-at, no longer (memory bounded by what waits).
    const ttl = await redis.pttl(keys().debounce('user-1'));
    expect(ttl).toBeGreaterThan(60_000);
    expect(ttl).toBeLessThanOrEqual(60_000 + DEBOUNCE_KEY_MARGIN_MS);
    await expectConsistent(redis, keys());
  });

  it('replaces the data and name, pushes the run-at back, and keeps the other options', async () => {
    const first = await queues.submit(
      queue,
      { n: 1 },
      {
        name: 'first',
        maxAttempts: 7,
        lane: 'tenant-a',
        priority: 3,
        debounce: { key: 'k', delayMs: 60_000 },
      },
    );
    const firstRunAt = await runAt(first.id);
    // Time passes for the waiting job: 30 s of its delay are gone.
    await redis.zadd(keys().schedule, 'XX', firstRunAt - 30_000, first.id);
    const before = await serverNowMs(redis);
    const second = await queues.submit(
      queue,
      { n: 2 },
      { name: 'second', debounce: { key: 'k', delayMs: 60_000 } },
    );
    expect(second).toEqual({ id: first.id, outcome: 'replaced' });
    expect(await runAt(first.id)).toBeGreaterThanOrEqual(before + 60_000);
    const view = await queues.getJob(queue, first.id);
    expect(view).toMatchObject({
      data: { n: 2 },
      name: 'second',
      maxAttempts: 7,
      lane: 'tenant-a',
      priority: 3,
    });
    // Without a name the name stays.
    await queues.submit(queue, { n: 3 }, { debounce: { key: 'k', delayMs: 60_000 } });
    expect(await queues.getJob(queue, first.id)).toMatchObject({ data: { n: 3 }, name: 'second' });
    expect((await queues.counts(queue)).schedule).toBe(1);
    expect(await redis.zcard(keys().schedule)).toBe(1);
    const stream = (await events(redis, keys())).map((e) => [e.fields.type, e.fields.ids]);
    expect(stream).toEqual([
      ['enqueued', first.id],
      ['debounced', first.id],
      ['debounced', first.id],
    ]);
    expect(await metrics(redis, keys())).toMatchObject({ enqueued: 1, debounced: 2 });
    await expectConsistent(redis, keys());
  });

  it('never pushes the run-at past first enqueue + maxWaitMs', async () => {
    const debounce = { key: 'capped', delayMs: 10_000, maxWaitMs: 15_000 };
    const { id } = await queues.submit(queue, 'a', { debounce });
    const row = keys().job(id);
    // Its deadline is on its row: first enqueue + maxWaitMs.
    expect(Number(await redis.hget(row, 'dm'))).toBe(Number(await redis.hget(row, 'df')) + 15_000);
    // Time passes: the job was first enqueued 12 s ago, so 3 s of its max wait are left.
    const firstAt = Number(await redis.hget(row, 'df')) - 12_000;
    await redis.hset(row, 'df', firstAt, 'dm', firstAt + 15_000);
    await redis.zadd(keys().schedule, 'XX', firstAt + 10_000 + 5_000, id);
    const replaced = await queues.submit(queue, 'b', { debounce });
    expect(replaced).toEqual({ id, outcome: 'replaced' });
    expect(await runAt(id)).toBe(firstAt + 15_000);
    expect((await queues.getJob(queue, id))?.data).toBe('b');
    const ttl = await redis.pttl(keys().debounce('capped'));
    expect(ttl).toBeLessThanOrEqual(3_000 + DEBOUNCE_KEY_MARGIN_MS);
  });

  it('rewrites a chunked payload whole: no chunk of the old one is left', async () => {
    const big = 'x'.repeat(600); // ten chunks of 63 bytes, with their count in 'dn'
    const { id } = await queues.submit(queue, { big }, { debounce: { key: 'chunks', delayMs: 60_000 } });
    const row = keys().job(id);
    expect(await redis.hget(row, 'dn')).not.toBeNull();
    await queues.submit(queue, { small: 1 }, { debounce: { key: 'chunks', delayMs: 60_000 } });
    const fields = Object.keys(await redis.hgetall(row));
    expect(fields.filter((field) => /^d(\d+|n)$/.test(field))).toEqual([]);
    expect((await queues.getJob(queue, id))?.data).toEqual({ small: 1 });
    const medium = 'y'.repeat(200); // four chunks, no count
    await queues.submit(queue, { medium }, { debounce: { key: 'chunks', delayMs: 60_000 } });
    expect((await queues.getJob(queue, id))?.data).toEqual({ medium });
    await queues.submit(queue, 2, { debounce: { key: 'chunks', delayMs: 60_000 } });
    expect(Object.keys(await redis.hgetall(row)).filter((f) => /^d(\d+|n)$/.test(f))).toEqual([]);
    expect((await queues.getJob(queue, id))?.data).toBe(2);
  });

  it.each(['due', 'active', 'completed', 'retrying'] as const)(
    'creates a new job once the first is %s (it left the wait for its run-at)',
    async (stage) => {
      const debounce = { key: `after-${stage}`, delayMs: 60_000 };
      const ctx = scriptContext(redis, queue);
      const first = await queues.submit(queue, 1, { debounce });
      // Time passes: its run-at is reached. A due job counts as released even before a claim.
      await backdate(redis, keys().schedule, first.id);
      if (stage !== 'due') {
        const [claim] = (await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: 'w' })).jobs;
        expect(claim.id).toBe(first.id);
        if (stage === 'completed') await completeJob(ctx, claim, '"ok"', 0);
        if (stage === 'retrying') {
          await failJob(ctx, claim, { error: 'again', backoffMs: 60_000, unrecoverable: false });
          // Back in schedule for its retry, which is not the wait a debounce replaces.
          expect((await queues.getJob(queue, first.id))?.state).toBe('schedule');
        }
      }
      const second = await queues.submit(queue, 2, { debounce });
      expect(second.outcome).toBe('created');
      expect(second.id).not.toBe(first.id);
      expect(await redis.get(keys().debounce(debounce.key))).toBe(second.id);
      if (stage !== 'completed') expect((await queues.getJob(queue, first.id))?.data).toBe(1);
      await expectConsistent(redis, keys());
    },
  );

  it('creates a new job when the waiting one was removed', async () => {
    const debounce = { key: 'removed', delayMs: 60_000 };
    const first = await queues.submit(queue, 1, { debounce });
    await queues.remove(queue, first.id);
    const second = await queues.submit(queue, 2, { debounce });
    expect(second.outcome).toBe('created');
    expect(second.id).not.toBe(first.id);
    expect(await redis.get(keys().debounce('removed'))).toBe(second.id);
  });

  it('keeps keys apart: another key, or another queue, is another job', async () => {
    const a = await queues.submit(queue, 1, { debounce: { key: 'a', delayMs: 60_000 } });
    const b = await queues.submit(queue, 2, { debounce: { key: 'b', delayMs: 60_000 } });
    const other = await queues.submit(uniqueQueue('debounce'), 3, {
      debounce: { key: 'a', delayMs: 60_000 },
    });
    expect([a.outcome, b.outcome, other.outcome]).toEqual(['created', 'created', 'created']);
    expect(new Set([a.id, b.id, other.id]).size).toBe(3);
  });

  it('enqueue() takes a debounce too and returns the id of the job that will run', async () => {
    const first = await queues.enqueue(queue, 1, { debounce: { key: 'e', delayMs: 60_000 } });
    const again = await queues.enqueue(queue, 2, { debounce: { key: 'e', delayMs: 60_000 } });
    expect(again).toBe(first);
    expect((await queues.getJob(queue, first))?.data).toBe(2);
  });
});
