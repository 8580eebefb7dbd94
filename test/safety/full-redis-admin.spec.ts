import type { INestApplication } from '@nestjs/common';
import { httpStatusOf, QueueService, RedisOutOfMemoryError } from '@app/echomq';
import { queueKeys } from '@app/echomq/internal';
import { EchoMqTestKit } from '@app/echomq/testing';
import { Redis } from 'ioredis';
import { CapturedLog } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import type { RedisServer } from '../support/redis-server';
import { closeAll, processorClass, serverNow, waitUntil } from '../worker/fixtures/support';
import { bootLogged } from './support/apps';
import { fill, makeRoom, refusesWrites, startNoEvictionServer } from './support/full-redis';

/**
 * What an operator does while Redis is full (maxmemory reached, noeviction): a full Redis
 * refuses every command queued in a MULTI, reads too, so none of these may be one. Resuming a
 * paused queue must work, because its workers are what frees room; pausing is a write that
 * grows memory, so it is refused, typed; the reads that tell why nothing runs (holds, lane
 * holds, schedules, the test kit's job lists) answer as on any Redis.
 */
const DRAINING = uniqueQueue('full-resume');
const handled = new Set<string>();
const Drainer = processorClass(DRAINING, { concurrency: 5 }, (job) => {
  handled.add(job.id);
  return null;
});

describe('admin calls on a full Redis', () => {
  let server: RedisServer;
  let admin: Redis;
  let queues: QueueService;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    server = await startNoEvictionServer();
    admin = new Redis(server.url);
  });
  beforeEach(async () => {
    // A producer with a configured node number: it takes no node lease, which a full Redis refuses.
    const producer = await bootLogged(apps, new CapturedLog(), {
      connection: { url: server.url },
      nodeId: 61,
    });
    queues = producer.get(QueueService);
  });
  afterEach(async () => {
    await makeRoom(admin);
    await closeAll(apps.splice(0));
  });
  afterAll(async () => {
    admin.disconnect();
    await server.destroy();
  });

  it('resumes a paused queue, which then drains while Redis stays full', async () => {
    const ids = await queues.enqueueMany(
      DRAINING,
      Array.from({ length: 6 }, (_, n) => ({ data: n })),
    );
    await queues.pause(DRAINING);
    await admin.set(queueKeys(DRAINING).hold, '1', 'PX', 600_000);
    await fill(admin);

    await queues.resume(DRAINING);
    expect(await queues.isPaused(DRAINING)).toBe(false);
    // Resume lifts a handler's hold too, full or not.
    expect(await queues.heldUntil(DRAINING)).toBeNull();

    await bootLogged(apps, new CapturedLog(), { connection: { url: server.url }, nodeId: 62 }, [Drainer]);
    await waitUntil(() => ids.every((id) => handled.has(id)), 'every job of the resumed queue handled');
    await waitUntil(
      async () => (await queues.counts(DRAINING)).active === 0,
      'the last completions recorded',
    );
    expect(await queues.counts(DRAINING)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    // It all ran on a full Redis.
    expect(await refusesWrites(admin)).toBe(true);
  });

  it('refuses pause with RedisOutOfMemoryError (503), having written nothing', async () => {
    const queue = uniqueQueue('full-pause');
    await queues.enqueue(queue, 'waiting');
    const keys = await admin.dbsize();
    await fill(admin);

    const error = await queues.pause(queue).then(
      () => new Error('paused on a full Redis'),
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RedisOutOfMemoryError);
    expect(error).toMatchObject({ code: 'REDIS_OUT_OF_MEMORY', target: `127.0.0.1:${server.port}` });
    expect((error as Error).message).toMatch(/refused SET \(pause the queue\); nothing was written/);
    expect(httpStatusOf(error as RedisOutOfMemoryError)).toBe(503);
    expect(await queues.isPaused(queue)).toBe(false);
    expect(await admin.dbsize()).toBe(keys);
    expect(await refusesWrites(admin)).toBe(true);
  });

  it('reads holds, lane holds, schedules and waiting jobs on a full Redis', async () => {
    const queue = uniqueQueue('full-reads');
    const keys = queueKeys(queue);
    const now = await queues.enqueue(queue, 'now');
    const later = await queues.enqueue(queue, 'later', { delayMs: 600_000 });
    await queues.upsertSchedule(queue, 'nightly', { cron: '0 3 * * *' }, { data: 'report' });
    const at = await serverNow(admin);
    await admin.set(keys.hold, '1', 'PX', 60_000);
    await admin.zadd(keys.laneHolds, at + 90_000, 'vip');
    await fill(admin);

    const until = await queues.heldUntil(queue);
    expect(until).toBeInstanceOf(Date);
    expect(until!.getTime()).toBeGreaterThan(at);
    expect(until!.getTime()).toBeLessThanOrEqual((await serverNow(admin)) + 60_000);
    expect(await queues.laneHolds(queue)).toEqual({ vip: new Date(at + 90_000) });

    const [schedule] = await queues.listSchedules(queue);
    expect(schedule).toMatchObject({ key: 'nightly', spec: { cron: '0 3 * * *', tz: 'UTC' } });
    expect(schedule.nextRunAt).toBeInstanceOf(Date);
    expect(await queues.getSchedule(queue, 'nightly')).toEqual(schedule);

    const kit = EchoMqTestKit.from(apps[0]);
    const waiting = await kit.enqueued(queue);
    // The two jobs and the schedule's next occurrence, oldest first.
    expect(waiting.map((view) => view.id)).toEqual([now, later, schedule.nextId]);
    expect(await refusesWrites(admin)).toBe(true);
  });
});
