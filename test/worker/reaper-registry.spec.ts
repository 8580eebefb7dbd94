import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QUEUE_REGISTRY_KEY, queueKeys, Reaper } from '@app/echomq/internal';
import { QUEUE_IDLE_MS } from '@app/echomq/worker/reaper';
import { bootApp } from '../support/nest';
import { connect, idMinter, uniqueQueue } from '../support/redis';
import { closeAll, serverNow } from './fixtures/support';

const HOUR = 3_600_000;
const mint = idMinter(9);

let app: INestApplication;
let reaper: Reaper;
let redis: Redis;

beforeAll(async () => {
  // A producer-only app: its reaper is not ticking, so each test drives it by hand.
  app = await bootApp([]);
  reaper = app.get(Reaper);
  redis = connect();
});
afterAll(async () => {
  redis.disconnect();
  await closeAll([app]);
});

/** A registered queue whose newest event is `ageMs` old by the server's clock (none when undefined). */
async function registeredQueue(prefix: string, ageMs?: number): Promise<string> {
  const queue = uniqueQueue(prefix);
  await redis.sadd(QUEUE_REGISTRY_KEY, queue);
  if (ageMs !== undefined) {
    // Stream ids start with the server-time ms of the entry, so an explicit old id is an old event.
    const at = (await serverNow(redis)) - ageMs;
    await redis.xadd(queueKeys(queue).events, `${at}-0`, 'type', 'enqueued', 'ids', mint());
  }
  return queue;
}

async function isRegistered(queue: string): Promise<boolean> {
  return (await redis.sismember(QUEUE_REGISTRY_KEY, queue)) === 1;
}

describe('the reaper keeps the queue registry to what is live', () => {
  it('drops an empty queue whose newest event is older than the idle period, and one that never had an event', async () => {
    const idle = await registeredQueue('idle', QUEUE_IDLE_MS + HOUR);
    const eventless = await registeredQueue('eventless');

    const pruned = await reaper.prune();

    expect(pruned).toEqual(expect.arrayContaining([idle, eventless]));
    expect(await isRegistered(idle)).toBe(false);
    expect(await isRegistered(eventless)).toBe(false);
  });

  it('keeps a queue with a job in any of its four sets, a paused one and a recently active one', async () => {
    const old = QUEUE_IDLE_MS + HOUR;
    const far = (await serverNow(redis)) + 365 * 24 * HOUR; // no other reaper moves these
    const withJob = {
      pending: await registeredQueue('pending', old),
      active: await registeredQueue('active', old),
      schedule: await registeredQueue('schedule', old),
      dead: await registeredQueue('dead', old),
    };
    await redis.zadd(queueKeys(withJob.pending).pending, 0, mint());
    await redis.zadd(queueKeys(withJob.active).active, far, mint());
    await redis.zadd(queueKeys(withJob.schedule).schedule, far, mint());
    await redis.zadd(queueKeys(withJob.dead).dead, 0, mint());
    const paused = await registeredQueue('paused', old);
    await redis.set(queueKeys(paused).paused, '1');
    const recent = await registeredQueue('recent', QUEUE_IDLE_MS - HOUR);

    const kept = [...Object.values(withJob), paused, recent];
    const pruned = await reaper.prune();

    for (const queue of kept) {
      expect(pruned).not.toContain(queue);
      expect(await isRegistered(queue)).toBe(true);
    }
  });

  it('never drops a queue its own process serves', async () => {
    const served = await registeredQueue('served', QUEUE_IDLE_MS + HOUR);
    reaper.start([served]);
    reaper.stop(); // only the served list matters here; no tick runs

    // (Another process's reaper may drop it meanwhile; the serving one puts it back every tick.)
    expect(await reaper.prune()).not.toContain(served);
  });

  it('prunes from its tick once per prune period, not on every tick', async () => {
    const idle = await registeredQueue('tick-idle', QUEUE_IDLE_MS + HOUR);
    const prune = jest.spyOn(reaper, 'prune');
    try {
      // Make the pass due now instead of waiting out the random first period.
      (reaper as unknown as { nextPruneAt: number }).nextPruneAt = 0;
      await reaper.tick();
      await reaper.tick();
      expect(prune).toHaveBeenCalledTimes(1);
      expect(await isRegistered(idle)).toBe(false);
    } finally {
      prune.mockRestore();
    }
  });
});
