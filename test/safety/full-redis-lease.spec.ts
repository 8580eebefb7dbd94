import type { INestApplication } from '@nestjs/common';
import { httpStatusOf, QueueService, RedisOutOfMemoryError } from '@app/echomq';
import { Redis } from 'ioredis';
import { CapturedLog, type LogLine } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import type { RedisServer } from '../support/redis-server';
import { closeAll, processorClass, waitUntil } from '../worker/fixtures/support';
import { bootLogged } from './support/apps';
import { fill, makeRoom, refusesWrites, startNoEvictionServer } from './support/full-redis';

const QUEUE = uniqueQueue('full-lease');
const handled = new Set<string>();
const Worker = processorClass(QUEUE, { concurrency: 2 }, (job) => {
  handled.add(job.id);
  return null;
});

const fromLease = (level: LogLine['level']) => (line: LogLine) =>
  line.level === level && line.message.startsWith('The Snowflake node lease: ');

/**
 * A process without a configured nodeId leases its Snowflake node number from Redis (SET NX),
 * which a full Redis (maxmemory reached, noeviction) refuses. Its enqueues then fail at once
 * with the error they would have met in their own script, RedisOutOfMemoryError, rather than
 * waiting out the minter's timeout for a lease that only room can bring; and the lease, tried
 * again every renewal interval, says so once, not at every try.
 */
describe('the node lease on a full Redis', () => {
  let server: RedisServer;
  let admin: Redis;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    server = await startNoEvictionServer();
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    await closeAll(apps.splice(0));
    await makeRoom(admin);
    admin.disconnect();
    await server.destroy();
  });

  it('refuses enqueue with RedisOutOfMemoryError, warns once, and leases once there is room', async () => {
    await fill(admin);
    // A worker that also enqueues, without nodeId. (One application: Nest's loggers are
    // process-wide, so two would share the last one's log.)
    const log = new CapturedLog();
    const app = await bootLogged(apps, log, { connection: { url: server.url } }, [Worker]);
    const queues = app.get(QueueService);

    const error = await queues.enqueue(QUEUE, 'while full').then(
      () => new Error('enqueued on a full Redis'),
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(RedisOutOfMemoryError);
    expect(error).toMatchObject({ code: 'REDIS_OUT_OF_MEMORY', target: `127.0.0.1:${server.port}` });
    expect((error as Error).message).toMatch(
      /refused SET NX \(a Snowflake node lease\); nothing was written/,
    );
    expect(httpStatusOf(error as RedisOutOfMemoryError)).toBe(503);

    // Three more refused tries (a debug line each), yet one warning.
    await log.waitFor(fromLease('debug'), 3);
    expect(log.matching(fromLease('warn'))).toHaveLength(1);
    expect(log.matching(fromLease('warn'))[0].message).toMatch(
      /Redis is full: .*enqueues and schedule upserts fail at once with REDIS_OUT_OF_MEMORY/,
    );
    expect(await refusesWrites(admin)).toBe(true);

    await makeRoom(admin);
    await log.waitFor((line) => line.message === 'The Snowflake node lease: Redis has room again');
    const id = await queues.enqueue(QUEUE, 'with room');
    await waitUntil(() => handled.has(id), 'the job enqueued once Redis had room');
    expect(log.matching(fromLease('warn'))).toHaveLength(1);
  });
});
