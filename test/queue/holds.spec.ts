import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { defineQueue, EchoMqModule, QueueService, throttleJob } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { serverNowMs } from '../support/assertions';
import { claimSome } from '../support/claims';
import { connect, redisUrl, uniqueQueue } from '../support/redis';

/**
 * The holds a handler's RateLimitedError leaves (the queue's `hold`, a lane's timer) are
 * readable through QueueService, so an operator who sees pending jobs, no pause and nothing
 * claimed can tell why and until when.
 */
describe('holds through QueueService', () => {
  let redis: Redis;
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    redis = connect();
    const moduleRef = await Test.createTestingModule({
      imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() } })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
  });

  it('shows no hold on a queue that has none', async () => {
    const queue = uniqueQueue('holds-none');
    await queues.enqueue(queue, { n: 1 }, { lane: 'acme' });
    expect(await queues.heldUntil(queue)).toBeNull();
    expect(await queues.laneHolds(queue)).toEqual({});
  });

  it("shows until when a queue-scope throttle holds the queue, on the server's clock", async () => {
    const queue = uniqueQueue('holds-queue');
    await queues.enqueue(queue, { n: 1 });
    const [job] = await claimSome(queues.context(queue));
    const before = await serverNowMs(redis);
    await throttleJob(queues.context(queue), job, 60_000, 'queue');
    const after = await serverNowMs(redis);

    const until = await queues.heldUntil(queue);
    expect(until).toBeInstanceOf(Date);
    expect(until!.getTime()).toBeGreaterThanOrEqual(before + 59_000);
    expect(until!.getTime()).toBeLessThanOrEqual(after + 60_000);
    // A queue hold is not a lane hold, and not a pause.
    expect(await queues.laneHolds(queue)).toEqual({});
    expect(await queues.isPaused(queue)).toBe(false);
    // The typed handle reads the same.
    expect(await queues.queue(defineQueue(queue)).heldUntil()).toEqual(until);
  });

  it('lifts the hold when the queue is resumed', async () => {
    const queue = uniqueQueue('holds-resume');
    await queues.enqueue(queue, { n: 1 });
    const [job] = await claimSome(queues.context(queue));
    await throttleJob(queues.context(queue), job, 60_000, 'queue');
    expect(await queues.heldUntil(queue)).not.toBeNull();
    await queues.resume(queue);
    expect(await queues.heldUntil(queue)).toBeNull();
    expect(await claimSome(queues.context(queue))).toHaveLength(1);
  });

  it('lists the lanes a lane-scope throttle holds, with their times, and leaves out holds that ran out', async () => {
    const queue = uniqueQueue('holds-lanes');
    await queues.enqueue(queue, { n: 1 }, { lane: 'acme', priority: 3 });
    await queues.enqueue(queue, { n: 2 }, { lane: '__proto__', priority: 2 });
    await queues.enqueue(queue, { n: 3 }, { lane: 'globex' });
    const ctx = queues.context(queue);
    const [acme, proto] = await claimSome(ctx, 2);
    expect([acme.lane, proto.lane]).toEqual(['acme', '__proto__']);
    const before = await serverNowMs(redis);
    await throttleJob(ctx, acme, 30_000, 'lane');
    await throttleJob(ctx, proto, 10_000, 'lane');
    const after = await serverNowMs(redis);

    const holds = await queues.laneHolds(queue);
    // Soonest first; a lane named __proto__ is a key like any other.
    expect(Object.keys(holds)).toEqual(['__proto__', 'acme']);
    expect(holds.acme.getTime()).toBeGreaterThanOrEqual(before + 30_000);
    expect(holds.acme.getTime()).toBeLessThanOrEqual(after + 30_000);
    expect(Object.getPrototypeOf(holds)).toBe(Object.prototype);
    expect(await queues.heldUntil(queue)).toBeNull();

    // A hold whose instant has passed holds nothing, even before a claim clears it.
    await redis.zadd(ctx.keys.laneHolds, before - 1_000, 'acme');
    expect(Object.keys(await queues.laneHolds(queue))).toEqual(['__proto__']);
  });

  it('shows a lane held by its own rate limit until its window opens', async () => {
    const queue = uniqueQueue('holds-rate');
    await queues.setLimits(queue, { laneRateLimit: { max: 1, windowMs: 60_000 } });
    await queues.enqueue(queue, { n: 1 }, { lane: 'acme' });
    await queues.enqueue(queue, { n: 2 }, { lane: 'acme' });
    const before = await serverNowMs(redis);
    // One claim spends the lane's room; the claim that finds it out of room sets its timer.
    await claimSome(queues.context(queue), 1);
    await expect(claimSome(queues.context(queue), 1)).rejects.toThrow('nothing to claim');

    const holds = await queues.laneHolds(queue);
    expect(Object.keys(holds)).toEqual(['acme']);
    expect(holds.acme.getTime()).toBeGreaterThan(before);
    // The window is counted in slices of a twentieth of it: it opens within a window and a slice.
    expect(holds.acme.getTime()).toBeLessThanOrEqual((await serverNowMs(redis)) + 60_000 + 3_000);
  });
});
