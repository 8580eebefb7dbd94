import type { INestApplication } from '@nestjs/common';
import { enqueueKeyed, newRequestId, queueKeys, type QueueService } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { events, jobRecord, metrics } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { producer } from './support';

describe('submit outcomes, and replays of the keyed enqueue', () => {
  let redis: Redis;
  let app: INestApplication;
  let queues: QueueService;
  const mint = idMinter(32);

  beforeAll(async () => {
    redis = connect();
    ({ app, queues } = await producer());
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
  });

  it("says 'created' for a plain job and 'matched' for an idempotency key's repeat", async () => {
    const queue = uniqueQueue('outcome');
    const plain = await queues.submit(queue, 1);
    expect(plain.outcome).toBe('created');
    const keyed = await queues.submit(queue, 2, { idempotencyKey: 'once' });
    expect(keyed.outcome).toBe('created');
    expect(await queues.submit(queue, 3, { idempotencyKey: 'once' })).toEqual({
      id: keyed.id,
      outcome: 'matched',
    });
    expect((await queues.counts(queue)).pending).toBe(2);
  });

  it('a repeated debounce request returns its first outcome and writes nothing more', async () => {
    const queue = uniqueQueue('replay');
    const ctx = scriptContext(redis, queue);
    const keys = queueKeys(queue);
    const rule = { kind: 'debounce', key: 'r', delayMs: 60_000 } as const;
    const createdBy = newRequestId();
    const first = await enqueueKeyed(ctx, jobRecord(mint(), { data: '1' }), rule, false, createdBy);
    expect(first.outcome).toBe('created');
    // The same request again (its reply was lost): the same answer, no second job.
    expect(await enqueueKeyed(ctx, jobRecord(mint(), { data: '1' }), rule, false, createdBy)).toEqual(first);

    const replacedBy = newRequestId();
    const replaced = await enqueueKeyed(ctx, jobRecord(mint(), { data: '2' }), rule, false, replacedBy);
    expect(replaced).toEqual({ id: first.id, outcome: 'replaced' });
    const runAt = await redis.zscore(keys.schedule, first.id);
    // A repeat of the replace, even carrying other data, changes nothing.
    expect(await enqueueKeyed(ctx, jobRecord(mint(), { data: '3' }), rule, false, replacedBy)).toEqual(
      replaced,
    );
    expect(await redis.hget(keys.job(first.id), 'd')).toBe('2');
    expect(await redis.zscore(keys.schedule, first.id)).toBe(runAt);
    expect(await redis.zcard(keys.schedule)).toBe(1);
    expect(await metrics(redis, keys)).toMatchObject({ enqueued: 1, debounced: 1 });
    expect((await events(redis, keys)).map((e) => e.fields.type)).toEqual(['enqueued', 'debounced']);
  });

  it('a repeated throttle request returns its first outcome, created or matched', async () => {
    const queue = uniqueQueue('replay');
    const ctx = scriptContext(redis, queue);
    const keys = queueKeys(queue);
    const rule = { kind: 'throttle', key: 't', windowMs: 60_000 } as const;
    const createdBy = newRequestId();
    const first = await enqueueKeyed(ctx, jobRecord(mint()), rule, false, createdBy);
    const matchedBy = newRequestId();
    const matched = await enqueueKeyed(ctx, jobRecord(mint()), rule, false, matchedBy);
    expect(matched).toEqual({ id: first.id, outcome: 'matched' });
    // The window ends; the repeats still answer as the first calls did.
    await redis.del(keys.throttleKey('t'));
    expect(await enqueueKeyed(ctx, jobRecord(mint()), rule, false, createdBy)).toEqual(first);
    expect(await enqueueKeyed(ctx, jobRecord(mint()), rule, false, matchedBy)).toEqual(matched);
    expect(await redis.zcard(keys.pending)).toBe(1);
    expect(await redis.exists(keys.throttleKey('t'))).toBe(0);
  });

  it('refuses an id that exists and writes nothing', async () => {
    const queue = uniqueQueue('replay');
    const ctx = scriptContext(redis, queue);
    const id = mint();
    await enqueueKeyed(ctx, jobRecord(id), { kind: 'throttle', key: 'a', windowMs: 60_000 }, false);
    await expect(
      enqueueKeyed(ctx, jobRecord(id), { kind: 'debounce', key: 'b', delayMs: 1_000 }, false),
    ).rejects.toMatchObject({ code: 'JOB_EXISTS' });
    expect(await redis.exists(queueKeys(queue).debounce('b'))).toBe(0);
    expect(await redis.zcard(queueKeys(queue).schedule)).toBe(0);
  });
});
