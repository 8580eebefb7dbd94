import type { INestApplication } from '@nestjs/common';
import { QueueService, RedisOutOfMemoryError } from '@app/echomq';
import { Redis } from 'ioredis';
import { CapturedLog } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import type { RedisServer } from '../support/redis-server';
import { closeAll } from '../worker/fixtures/support';
import { bootLogged } from './support/apps';
import { fill, makeRoom, refusesWrites, startNoEvictionServer } from './support/full-redis';

/**
 * Advancing a schedule makes its next occurrence, which grows memory, so a full Redis
 * (maxmemory reached, noeviction) refuses it: as RedisOutOfMemoryError, which the loops that
 * advance (the reapers' sweep, a claim) say once. Their reads must not be a MULTI, which a
 * full Redis refuses whole, reads too, as a bare EXECABORT that tells nobody why.
 */
describe('advancing schedules on a full Redis', () => {
  let server: RedisServer;
  let admin: Redis;
  let queues: QueueService;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    server = await startNoEvictionServer();
    admin = new Redis(server.url);
    const producer = await bootLogged(apps, new CapturedLog(), {
      connection: { url: server.url },
      nodeId: 73,
    });
    queues = producer.get(QueueService);
  });
  afterEach(async () => {
    await makeRoom(admin);
  });
  afterAll(async () => {
    await closeAll(apps.splice(0));
    admin.disconnect();
    await server.destroy();
  });

  it('sweeps a queue whose occurrences wait, and refuses an advance as RedisOutOfMemoryError', async () => {
    const queue = uniqueQueue('full-sweep');
    await queues.upsertSchedule(queue, 'waits', { everyMs: 60_000 }, { data: 'w' });
    const gone = await queues.upsertSchedule(queue, 'gone', { everyMs: 60_000 }, { data: 'g' });
    // Its next occurrence removed: the sweep must advance the schedule to a new one.
    await queues.remove(queue, gone.nextId);
    await fill(admin);

    await expect(queues.sweepSchedules(queue, 10)).rejects.toBeInstanceOf(RedisOutOfMemoryError);
    const error = await queues.advanceSchedule(queue, 'gone', gone.nextId).then(
      () => new Error('advanced on a full Redis'),
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RedisOutOfMemoryError);
    expect((error as Error).message).toMatch(/refused emqAdvanceSchedule; nothing was written/);
    expect((await queues.getSchedule(queue, 'gone'))?.nextId).toBe(gone.nextId);
    await queues.removeSchedule(queue, 'gone');
    await expect(queues.sweepSchedules(queue, 10)).resolves.toEqual({
      advanced: 0,
      skipped: 0,
      complete: true,
    });
    expect(await refusesWrites(admin)).toBe(true);

    await makeRoom(admin);
    const again = await queues.upsertSchedule(queue, 'gone', { everyMs: 60_000 }, { data: 'g' });
    await queues.remove(queue, again.nextId);
    await expect(queues.sweepSchedules(queue, 10)).resolves.toEqual({
      advanced: 1,
      skipped: 0,
      complete: true,
    });
  });
});
