import { QueueBusyError, type ScriptContext } from '@app/echomq/internal';
import { OBLITERATE_WALKS_MAX, obliterateQueue } from '@app/echomq/queue/job-control/obliterate-queue';
import { ObliterateStoppedError } from '@app/echomq';
import type { Redis } from 'ioredis';
import { jobRecord } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { claimUpTo, expectFlowConsistent } from '../lifecycle/support/flow';
import { enqueue, expectEveryRowInOneSet, repeat } from './support/control';
import { beforeEachCall } from './support/intercept';

/**
 * Obliterate against what keeps a queue alive while it runs: a worker that claims again (the
 * queue resumed meanwhile), a producer that keeps enqueueing, a worker that crashed (its lease
 * expired, not yet reaped). Each acts between two calls at a known point (beforeEachCall).
 */
describe('obliterate: stopping part-way, with a clear error', () => {
  let redis: Redis;
  const mint = idMinter(52);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  const context = (): ScriptContext => scriptContext(redis, uniqueQueue('oblit-stop'));

  it('a later call refused by a worker says the queue is left partly removed, and resumed', async () => {
    const ctx = context();
    await enqueue(
      ctx,
      Array.from({ length: 900 }, (_, i) => jobRecord(mint(), { lane: `t${i % 3}` })),
    );
    const hooked = beforeEachCall(ctx, 'emqObliterate', async (call) => {
      if (call !== 1) return;
      // Someone resumed the queue and a worker claimed, between the first call and the second.
      await redis.del(ctx.keys.paused);
      expect(await claimUpTo(ctx, 1)).toHaveLength(1);
    });

    const stopped = obliterateQueue(hooked, undefined, repeat);
    await expect(stopped).rejects.toBeInstanceOf(ObliterateStoppedError);
    const error = (await stopped.catch((e: unknown) => e)) as ObliterateStoppedError;
    expect(error).toBeInstanceOf(QueueBusyError);
    expect(error).toMatchObject({ code: 'QUEUE_BUSY', reason: 'workers', active: 1, removed: 500 });
    expect(error.message).toMatch(/resumed after obliterate paused it/);
    expect(error.message).toMatch(/left partly removed \(500 jobs gone, its schedules deleted\)/);
    expect(await redis.get(ctx.keys.paused)).toBeNull();
    expect(await expectEveryRowInOneSet(redis, ctx.keys)).toHaveLength(400);
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('the first call refused is a plain QueueBusyError: nothing was written', async () => {
    const ctx = context();
    await enqueue(ctx, [jobRecord(mint())]);
    await claimUpTo(ctx, 1);
    const refused = await obliterateQueue(ctx, undefined, repeat).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(QueueBusyError);
    expect(refused).not.toBeInstanceOf(ObliterateStoppedError);
    expect(await redis.exists(ctx.keys.paused)).toBe(0);
  });

  it('stops after OBLITERATE_WALKS_MAX walks against a producer that keeps up, with a clear error', async () => {
    const ctx = context();
    let made = 0;
    // Before each call: one job into the default lane (behind the walk once it began), and
    // every other call 300 jobs in new lanes (so a walk takes two calls).
    const hooked = beforeEachCall(ctx, 'emqObliterate', async (call) => {
      const lanes = call % 2 === 0 ? 300 : 0;
      await enqueue(ctx, [
        jobRecord(mint()),
        ...Array.from({ length: lanes }, () => jobRecord(mint(), { lane: `p${made++}` })),
      ]);
    });

    const error = (await obliterateQueue(hooked, { force: true }, repeat).catch(
      (e: unknown) => e,
    )) as ObliterateStoppedError;
    expect(error).toBeInstanceOf(ObliterateStoppedError);
    expect(error).toMatchObject({ reason: 'producers', active: 0 });
    expect(error.message).toMatch(/jobs kept being enqueued.*left paused and partly removed/);
    expect(error.removed).toBeGreaterThan(OBLITERATE_WALKS_MAX * 300 - 300);
    expect(await redis.get(ctx.keys.paused)).toBe('1');
    await expectFlowConsistent(redis, ctx.keys);

    // Once the producer stops, obliterate again finishes it.
    expect((await obliterateQueue(ctx, undefined, repeat)).removed).toBeGreaterThan(0);
    expect(await redis.exists(ctx.keys.paused, ctx.keys.pending)).toBe(0);
  });

  it('a lease already expired (a crashed worker, not yet reaped) does not refuse it', async () => {
    const ctx = context();
    await enqueue(ctx, [jobRecord(mint()), jobRecord(mint())]);
    const [job] = await claimUpTo(ctx, 1);
    // The lease deadline in the past, as after a crash once the lease ran out.
    await redis.zadd(ctx.keys.active, 1, job.id);

    expect(await obliterateQueue(ctx, undefined, repeat)).toEqual({ removed: 2 });
    const cancels = await redis.xrange(ctx.keys.cancels, '-', '+');
    expect(cancels.map(([, fields]) => fields)).toEqual([['id', job.id, 'attempt', String(job.attempt)]]);
  });
});
