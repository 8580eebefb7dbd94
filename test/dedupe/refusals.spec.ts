import type { INestApplication } from '@nestjs/common';
import {
  defineQueue,
  enqueueKeyed,
  InvalidArgumentError,
  type EnqueueOptions,
  type QueueService,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { jobRecord } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { producer, queueKeysPresent, registered } from './support';

const debounce = { key: 'k', delayMs: 1_000 };
const throttle = { key: 'k', windowMs: 1_000 };

/** Options the library refuses before anything is sent, with what the refusal must say. */
const REFUSED: [string, unknown, RegExp][] = [
  [
    'debounce with idempotencyKey',
    { debounce, idempotencyKey: 'i' },
    /at most one of idempotencyKey, debounce/,
  ],
  ['throttle with idempotencyKey', { throttle, idempotencyKey: 'i' }, /idempotencyKey and throttle/],
  ['debounce with throttle', { debounce, throttle }, /debounce and throttle/],
  ['debounce with delayMs', { debounce, delayMs: 5 }, /no delayMs or runAt/],
  ['debounce with runAt', { debounce, runAt: new Date() }, /no delayMs or runAt/],
  ['debounce that is not an object', { debounce: 'k' }, /debounce must be an object/],
  ['debounce without a key', { debounce: { delayMs: 1 } }, /debounce\.key must be a string of 1 to 256/],
  ['debounce with an empty key', { debounce: { key: '', delayMs: 1 } }, /debounce\.key/],
  ['debounce with a long key', { debounce: { key: 'x'.repeat(257), delayMs: 1 } }, /debounce\.key/],
  ['debounce of 0 ms', { debounce: { key: 'k', delayMs: 0 } }, /debounce\.delayMs must be an integer from 1/],
  ['debounce of 1.5 ms', { debounce: { key: 'k', delayMs: 1.5 } }, /debounce\.delayMs/],
  ['debounce past 30 days', { debounce: { key: 'k', delayMs: 2_592_000_001 } }, /debounce\.delayMs/],
  [
    'maxWaitMs under delayMs',
    { debounce: { ...debounce, maxWaitMs: 999 } },
    /debounce\.maxWaitMs .* from 1000/,
  ],
  ['a misspelt maxWaitMs', { debounce: { ...debounce, maxWait: 5_000 } }, /got debounce\.maxWait$/],
  ['throttle without a window', { throttle: { key: 'k' } }, /throttle\.windowMs must be an integer/],
  ['throttle that is an array', { throttle: [] }, /throttle must be an object/],
  ['throttle with a bad lane', { throttle, lane: 'no spaces' }, /lane/],
  ['debounce with a bad maxAttempts', { debounce, maxAttempts: 0 }, /maxAttempts/],
];

describe('dedupe option refusals write nothing', () => {
  let redis: Redis;
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    redis = connect();
    ({ app, queues } = await producer());
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
  });

  it.each(REFUSED)('refuses %s with InvalidArgumentError', async (_what, options, message) => {
    const queue = uniqueQueue('refused');
    for (const call of [
      () => queues.submit(queue, 1, options as EnqueueOptions),
      () => queues.enqueue(queue, 1, options as EnqueueOptions),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidArgumentError);
      expect((error as Error).message).toMatch(message);
    }
    expect(await queueKeysPresent(redis, queue)).toEqual([]);
    expect(await registered(redis, queue)).toBe(false);
  });

  it('refuses debounce and throttle jobs in enqueueMany, naming the job', async () => {
    const queue = uniqueQueue('refused');
    await expect(queues.enqueueMany(queue, [{ data: 1, debounce }])).rejects.toThrow(
      /^a job with debounce or throttle is enqueued one at a time \(enqueue or submit\), not in enqueueMany/,
    );
    await expect(queues.enqueueMany(queue, [{ data: 1 }, { data: 2, throttle }])).rejects.toThrow(
      /^jobs\[1\]: a job with debounce or throttle/,
    );
    expect(await queueKeysPresent(redis, queue)).toEqual([]);
  });

  it("checks a typed queue's data schema before anything is sent", async () => {
    const Numbers = defineQueue(uniqueQueue('typed'), { data: z.number() });
    const handle = queues.queue(Numbers);
    await expect(handle.submit('one' as unknown as number, { debounce })).rejects.toThrow(/number/);
    expect(await queueKeysPresent(redis, Numbers.name)).toEqual([]);
    expect((await handle.submit(1, { debounce })).outcome).toBe('created');
  });

  it('the script refuses malformed arguments before its first write', async () => {
    const queue = uniqueQueue('refused');
    const ctx = scriptContext(redis, queue);
    const id = idMinter(31)();
    // A debounce with a delay of its own; a backoff no worker could read.
    const bad = [jobRecord(id, { delayMs: 5 }), jobRecord(id, { backoff: '{"type":"custom"}' })];
    await expect(enqueueKeyed(ctx, bad[0], { kind: 'debounce', ...debounce }, false)).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(enqueueKeyed(ctx, bad[1], { kind: 'throttle', ...throttle }, false)).rejects.toThrow(
      InvalidArgumentError,
    );
    await expect(
      enqueueKeyed(ctx, jobRecord(id), { kind: 'debounce', key: 'k', delayMs: 10, maxWaitMs: 5 }, false),
    ).rejects.toThrow(InvalidArgumentError);
    expect(await queueKeysPresent(redis, queue)).toEqual([]);
  });
});
