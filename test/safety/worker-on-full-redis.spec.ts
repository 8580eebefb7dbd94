import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Processor, QueueService, RedisOutOfMemoryError, type Job } from '@app/echomq';
import { Reaper } from '@app/echomq/internal';
import { CapturedLog, type LogLine } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import type { RedisServer } from '../support/redis-server';
import { closeAll, waitUntil } from '../worker/fixtures/support';
import { bootLogged } from './support/apps';
import { fill, makeRoom, refusesWrites, startNoEvictionServer } from './support/full-redis';

const QUEUE = uniqueQueue('full-worker');
const handled = new Set<string>();

@Processor(QUEUE, { concurrency: 10 })
class Recorder {
  process(job: Job<unknown>): unknown {
    handled.add(job.id);
    return job.data;
  }
}

const saysFull = (line: LogLine): boolean =>
  line.level === 'warn' && line.message.startsWith('The reaper: Redis is full');

/**
 * A worker that (re)starts while Redis is full must still serve: its jobs are what frees room.
 * Registration writes nothing then (the format is read instead of recorded), and the loops
 * that meet the refusal on every pass say it once.
 */
describe('a worker booted while Redis is full', () => {
  let server: RedisServer;
  let admin: Redis;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    server = await startNoEvictionServer();
    admin = new Redis(server.url);
  });
  afterEach(async () => {
    await closeAll(apps.splice(0));
    await makeRoom(admin);
  });
  afterAll(async () => {
    admin.disconnect();
    await server.destroy();
  });

  it('serves its queue, and its reaper, which only reads while nothing is due, meets no refusal and says nothing', async () => {
    const producer = await bootLogged(apps, new CapturedLog(), {
      connection: { url: server.url },
      nodeId: 51,
    });
    const queues = producer.get(QueueService);
    const waiting = await queues.enqueueMany(
      QUEUE,
      Array.from({ length: 20 }, (_, n) => ({ data: n })),
    );
    const later = await queues.enqueue(QUEUE, 'later', { delayMs: 200 });
    await fill(admin);

    const log = new CapturedLog();
    const worker = await bootLogged(
      apps,
      log,
      { connection: { url: server.url }, reaper: { intervalMs: 50 } },
      [Recorder],
    );
    // The reaper's turns (its timer's, looking at the queues that are due; every 50 ms here).
    const reaper: { turn(all: boolean): Promise<void> } = worker.get<unknown>(Reaper) as never;
    const ticks = jest.spyOn(reaper, 'turn');
    await waitUntil(() => [...waiting, later].every((id) => handled.has(id)), 'every job handled');
    await waitUntil(() => ticks.mock.calls.length >= 10, 'ten reaper turns on the full Redis');
    expect(await refusesWrites(admin)).toBe(true);
    await expect(queues.enqueue(QUEUE, 'while full')).rejects.toBeInstanceOf(RedisOutOfMemoryError);
    expect(await queues.counts(QUEUE)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    // The reaper's looks are reads, and nothing was due, so a full Redis refused it nothing: no
    // warning at all (a served queue the registry still lists is not written back).
    expect(log.matching(saysFull)).toHaveLength(0);

    await makeRoom(admin);
    const after = await queues.enqueue(QUEUE, 'after');
    await waitUntil(() => handled.has(after), 'the job enqueued once Redis had room');
    expect(log.matching(saysFull)).toHaveLength(0);
  });
});
