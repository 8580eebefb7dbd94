import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Processor, QueueService, RedisOutOfMemoryError, type Job, type JobId } from '@app/echomq';
import { CapturedLog } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import type { RedisServer } from '../support/redis-server';
import { closeAll, waitUntil } from '../worker/fixtures/support';
import { bootLogged } from './support/apps';
import { startNoEvictionServer, stateSets, usedMemory } from './support/full-redis';

const QUEUE = uniqueQueue('pressure');
const handled = new Set<string>();

@Processor(QUEUE, { concurrency: 50 })
class Recorder {
  process(job: Job<string>): void {
    handled.add(job.id);
  }
}

const MAXMEMORY = 3 * 1024 * 1024;
/** Small enough that the whole run fits in a few seconds; large enough that rows dominate the memory. */
const PAYLOAD = 'x'.repeat(400);
const BATCH = 100;
/** A fill that never meets the limit is a broken test, not an endless one. */
const MOST_BATCHES = 200;

/**
 * A Redis with a real maxmemory and noeviction, filled by enqueue until it refuses: nothing
 * accepted is lost, nothing refused is half-written, and a worker then drains the queue and
 * frees the room that enqueue needs. Completed rows are not retained and the event stream is
 * short, so processing frees more than it takes (docs/reliability.md, "A full Redis").
 */
describe('enqueue into a Redis that fills up', () => {
  let server: RedisServer;
  let admin: Redis;
  const apps: INestApplication[] = [];
  const options = (nodeId?: number) => ({
    connection: { url: server.url },
    eventsMaxLen: 100,
    reaper: { intervalMs: 100 },
    ...(nodeId === undefined ? {} : { nodeId }),
  });

  beforeAll(async () => {
    server = await startNoEvictionServer(String(MAXMEMORY));
    admin = new Redis(server.url);
  });
  afterAll(async () => {
    await closeAll(apps.splice(0));
    admin.disconnect();
    await server.destroy();
  });

  it('is refused once full having written nothing, and works again once a worker frees room', async () => {
    const producer = await bootLogged(apps, new CapturedLog(), options(53));
    const queues = producer.get(QueueService);
    const batch = (): { data: string }[] => Array.from({ length: BATCH }, () => ({ data: PAYLOAD }));

    const accepted: JobId[] = [];
    let refusal: unknown;
    for (let n = 0; n < MOST_BATCHES && refusal === undefined; n++) {
      const keysBefore = await admin.dbsize();
      try {
        accepted.push(...(await queues.enqueueMany(QUEUE, batch())));
      } catch (error) {
        refusal = error;
        // The refused call wrote nothing: not a row, not an idempotency key, not a reply record.
        expect(await admin.dbsize()).toBe(keysBefore);
      }
    }
    expect(refusal).toBeInstanceOf(RedisOutOfMemoryError);
    expect(accepted.length).toBeGreaterThan(0);
    // At its limit a Redis's usage moves with its clients' buffers (a 45 KB call is counted while
    // it is read), so the next call may fit again: a limit a little below what it holds now keeps
    // it full for the refusals checked next.
    const limit = (await usedMemory(admin)) - 256 * 1024;
    await admin.config('SET', 'maxmemory', String(limit));

    const before = { keys: await admin.dbsize(), sets: await stateSets(admin, queueKeysOf(queues)) };
    expect(Object.keys(before.sets.pending)).toHaveLength(accepted.length);
    for (const attempt of [
      () => queues.enqueue(QUEUE, PAYLOAD),
      () => queues.enqueue(QUEUE, PAYLOAD, { idempotencyKey: 'full-once' }),
      () => queues.enqueue(QUEUE, PAYLOAD, { delayMs: 1_000 }),
      () => queues.enqueueMany(QUEUE, batch()),
    ]) {
      await expect(attempt()).rejects.toBeInstanceOf(RedisOutOfMemoryError);
    }
    expect({ keys: await admin.dbsize(), sets: await stateSets(admin, queueKeysOf(queues)) }).toEqual(before);

    await bootLogged(apps, new CapturedLog(), options(), [Recorder]);
    await waitUntil(() => accepted.every((id) => handled.has(id)), 'every accepted job handled', 20_000);
    await waitUntil(async () => (await queues.counts(QUEUE)).active === 0, 'the last completions recorded');
    expect(await queues.counts(QUEUE)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await usedMemory(admin)).toBeLessThan(limit);

    const again = await queues.enqueueMany(QUEUE, batch());
    await waitUntil(() => again.every((id) => handled.has(id)), 'the jobs enqueued once there was room');
  });
});

/** The queue's keys, as the producer's own QueueService composes them. */
function queueKeysOf(queues: QueueService) {
  return queues.context(QUEUE).keys;
}
