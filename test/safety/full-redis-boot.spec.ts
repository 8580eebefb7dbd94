import type { INestApplication } from '@nestjs/common';
import { Processor, QueueService, RedisOutOfMemoryError, Schedule, type Job } from '@app/echomq';
import { RedisConnections } from '@app/echomq/internal';
import { Redis } from 'ioredis';
import { CapturedLog, type LogLine } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import type { RedisServer } from '../support/redis-server';
import { closeAll, processorClass, waitUntil } from '../worker/fixtures/support';
import { bootLogged } from './support/apps';
import { fill, makeRoom, refusesWrites, startNoEvictionServer } from './support/full-redis';

const TICKING = uniqueQueue('full-boot-schedule');
const ticked = new Set<string>();

@Schedule('tick', { everyMs: 60_000, data: 'v1' })
@Processor(TICKING)
class TickerBefore {
  process(job: Job): void {
    ticked.add(job.id);
  }
}

/** The same queue and schedule key, redeployed with another interval. */
@Schedule('tick', { everyMs: 30_000, data: 'v2' })
@Processor(TICKING)
class TickerAfter {
  process(job: Job): void {
    ticked.add(job.id);
  }
}

const LIMITED = uniqueQueue('full-boot-limits');
const Limited = processorClass(LIMITED, { concurrency: 10, globalConcurrency: 1 }, () => null);

const warns = (who: string) => (line: LogLine) =>
  line.level === 'warn' && line.message.startsWith(`${who}: Redis is full`);

/**
 * A worker that (re)starts while Redis is full (maxmemory reached, noeviction) must boot and
 * serve: its jobs are what frees room. What its boot could not write (a changed declared
 * schedule, the limits its configuration sets) is said once and written once there is room,
 * not at some later use that a worker-only process never makes.
 */
describe('booting on a full Redis', () => {
  let server: RedisServer;
  let admin: Redis;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    server = await startNoEvictionServer();
    admin = new Redis(server.url);
  });
  afterEach(async () => {
    // (Nest's loggers are process-wide: each test's applications go before the next one's.)
    await closeAll(apps.splice(0));
    await makeRoom(admin);
  });
  afterAll(async () => {
    admin.disconnect();
    await server.destroy();
  });

  const options = (nodeId: number) => ({ connection: { url: server.url }, nodeId });

  it('boots a worker whose declared schedule is unchanged, or changed (upserted once there is room)', async () => {
    const first = await bootLogged(apps, new CapturedLog(), options(66), [TickerBefore]);
    const stored = await first.get(QueueService).getSchedule(TICKING, 'tick');
    expect(stored).toMatchObject({ spec: { everyMs: 60_000 } });
    const waiting = await first.get(QueueService).enqueue(TICKING, 'waiting', { delayMs: 300 });
    await closeAll(apps.splice(0));
    await fill(admin);

    // The same declaration: its upsert is 'unchanged', which a full Redis lets through.
    const unchanged = new CapturedLog();
    const again = await bootLogged(apps, unchanged, options(67), [TickerBefore]);
    expect(await again.get(QueueService).getSchedule(TICKING, 'tick')).toEqual(stored);
    expect(unchanged.matching(warns('Declared schedules'))).toHaveLength(0);
    await closeAll(apps.splice(0));

    // A new declaration: refused, said once; the worker serves all the same.
    const log = new CapturedLog();
    const redeployed = await bootLogged(apps, log, options(68), [TickerAfter]);
    await waitUntil(() => ticked.has(waiting), 'the waiting job handled on the full Redis');
    expect(log.matching(warns('Declared schedules'))).toHaveLength(1);
    expect(log.matching(warns('Declared schedules'))[0].message).toContain(
      `Schedule tick of queue ${TICKING}, and any other declared schedule Redis refuses, is upserted once there is room`,
    );
    expect(await redeployed.get(QueueService).getSchedule(TICKING, 'tick')).toEqual(stored);
    expect(await refusesWrites(admin)).toBe(true);

    await makeRoom(admin);
    await log.waitFor((line) => line.message === `Schedule tick of queue ${TICKING} is upserted`);
    expect(await redeployed.get(QueueService).getSchedule(TICKING, 'tick')).toMatchObject({
      spec: { everyMs: 30_000 },
      template: { data: 'v2' },
    });
    expect(log.matching(warns('Declared schedules'))).toHaveLength(1);
  });

  it("writes a worker's configured limits once there is room, and not again over an admin's", async () => {
    await fill(admin);
    const log = new CapturedLog();
    const worker = await bootLogged(apps, log, options(69), [Limited]);
    const queues = worker.get(QueueService);
    const said = await log.waitFor(warns(`The registration of queue ${LIMITED}`));
    expect(said[0].message).toContain('(globalConcurrency 1) are written once there is room');
    expect(await queues.getLimits(LIMITED)).toMatchObject({ globalConcurrency: null });

    await makeRoom(admin);
    await waitUntil(
      async () => (await queues.getLimits(LIMITED)).globalConcurrency === 1,
      'the configured limit written once Redis had room',
    );
    expect(log.matching(warns(`The registration of queue ${LIMITED}`))).toHaveLength(1);

    // An admin's later change stands, also past this process's next enqueue of the queue.
    const producer = await bootLogged(apps, new CapturedLog(), options(70));
    await producer.get(QueueService).setLimits(LIMITED, { globalConcurrency: 3 });
    await queues.enqueue(LIMITED, 'after the admin');
    expect(await queues.getLimits(LIMITED)).toMatchObject({ globalConcurrency: 3 });
  });

  it("writes a producer's queues.<name> limits once there is room, without registering at each refused enqueue", async () => {
    const queue = uniqueQueue('full-boot-producer');
    await fill(admin);
    const log = new CapturedLog();
    const producer = await bootLogged(apps, log, {
      ...options(72),
      queues: { [queue]: { globalConcurrency: 2 } },
    });
    const queues = producer.get(QueueService);
    expect(log.matching(warns(`The registration of queue ${queue}`))).toHaveLength(1);

    const registrations = jest.spyOn(producer.get(RedisConnections), 'serverVerified');
    for (let call = 0; call < 20; call++) {
      await expect(queues.enqueue(queue, call)).rejects.toBeInstanceOf(RedisOutOfMemoryError);
    }
    // Only the background retry registers it again (once a second), not each enqueue.
    expect(registrations.mock.calls.length).toBeLessThanOrEqual(3);

    await makeRoom(admin);
    await waitUntil(
      async () => (await queues.getLimits(queue)).globalConcurrency === 2,
      'the configured limit written once Redis had room',
    );
    await queues.enqueue(queue, 'with room');
    expect(log.matching(warns(`The registration of queue ${queue}`))).toHaveLength(1);
  });
});
