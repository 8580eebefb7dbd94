import type { INestApplication } from '@nestjs/common';
import { QueueService, RedisOutOfMemoryError } from '@app/echomq';
import { queueKeys } from '@app/echomq/internal';
import { Redis } from 'ioredis';
import { keyDump, queuePattern } from '../api/support/api';
import { CapturedLog } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import type { RedisServer } from '../support/redis-server';
import { closeAll } from '../worker/fixtures/support';
import { bootLogged } from './support/apps';
import { fill, makeRoom, refusesWrites, startNoEvictionServer } from './support/full-redis';

/** The refusal a call met, or an error saying it went through. */
async function refusal(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (value) => new Error(`went through on a full Redis: ${JSON.stringify(value)}`),
    (error: unknown) => error,
  );
}

/**
 * A full Redis (maxmemory reached, noeviction) refuses only a script's first write, so a
 * script that may grow memory must make its first write one that a full Redis refuses: a
 * debounce that replaces its waiting job's data and an update with new data are refused
 * before they write anything, like an enqueue. A call that creates nothing (a throttle key's
 * match, an unchanged schedule) goes through: its reply record is all it writes.
 */
describe('writes that may grow memory, on a full Redis', () => {
  let server: RedisServer;
  let admin: Redis;
  let queues: QueueService;
  const apps: INestApplication[] = [];

  beforeAll(async () => {
    server = await startNoEvictionServer();
    admin = new Redis(server.url);
    // A configured node number: no node lease, which a full Redis refuses.
    const producer = await bootLogged(apps, new CapturedLog(), {
      connection: { url: server.url },
      nodeId: 65,
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

  async function expectRefusedUnwritten(queue: string, call: () => Promise<unknown>, script: string) {
    const before = await keyDump(admin, queuePattern(queue));
    const error = await refusal(call());
    expect(error).toBeInstanceOf(RedisOutOfMemoryError);
    expect((error as Error).message).toContain(`refused ${script}; nothing was written`);
    expect(await keyDump(admin, queuePattern(queue))).toEqual(before);
    expect(await refusesWrites(admin)).toBe(true);
  }

  it('refuses a debounce that would replace its waiting job, having written nothing', async () => {
    const queue = uniqueQueue('full-debounce');
    const debounce = { key: 'k', delayMs: 600_000 };
    const first = await queues.submit(queue, 'first', { debounce });
    await fill(admin);

    const replace = () => queues.submit(queue, 'y'.repeat(5_000), { debounce, name: 'renamed' });
    await expectRefusedUnwritten(queue, replace, 'emqEnqueueKeyed');
    await makeRoom(admin);
    await expect(replace()).resolves.toEqual({ id: first.id, outcome: 'replaced' });
    expect((await queues.getJob(queue, first.id))?.data).toBe('y'.repeat(5_000));
  });

  it('refuses an update with new data, having written nothing', async () => {
    const queue = uniqueQueue('full-update');
    const id = await queues.enqueue(queue, 'x'.repeat(300), { delayMs: 600_000 });
    await fill(admin);

    const update = () => queues.update(queue, id, { data: 'y'.repeat(5_000) });
    await expectRefusedUnwritten(queue, update, 'emqUpdateJob');
    await makeRoom(admin);
    await expect(update()).resolves.toBe('schedule');
    expect((await queues.getJob(queue, id))?.data).toBe('y'.repeat(5_000));
  });

  it('leaves an updated row as an enqueue of its new data would write it', async () => {
    const queue = uniqueQueue('update-chunks');
    const row = (id: string) => admin.hgetall(queueKeys(queue).job(id));
    const chunkFields = async (id: string) =>
      Object.keys(await row(id))
        .filter((field) => /^d/.test(field))
        .sort();
    // JSON strings of 600 (10 chunks, with their count), 350 (6), 200 (4, no count) and 20 bytes.
    const sizes = [598, 348, 198, 18];
    const id = await queues.enqueue(queue, 'a'.repeat(sizes[0]));
    for (const size of sizes.slice(1)) {
      await queues.update(queue, id, { data: 'b'.repeat(size) });
      const fresh = await queues.enqueue(queue, 'b'.repeat(size));
      expect(await chunkFields(id)).toEqual(await chunkFields(fresh));
      expect((await queues.getJob(queue, id))?.data).toBe('b'.repeat(size));
    }
    expect(await chunkFields(id)).toEqual(['d']);
  });

  it("answers a throttle key's match with its job", async () => {
    const queue = uniqueQueue('full-throttle');
    const throttle = { key: 'once', windowMs: 600_000 };
    const first = await queues.submit(queue, 'first', { throttle });
    await fill(admin);

    await expect(queues.submit(queue, 'second', { throttle })).resolves.toEqual({
      id: first.id,
      outcome: 'matched',
    });
    expect(await queues.counts(queue)).toEqual({ pending: 1, active: 0, schedule: 0, dead: 0 });
    expect(await refusesWrites(admin)).toBe(true);
  });

  it('answers an unchanged schedule, and refuses a changed one having written nothing', async () => {
    const queue = uniqueQueue('full-schedule');
    const created = await queues.upsertSchedule(queue, 'tick', { everyMs: 60_000 }, { data: 1 });
    await fill(admin);

    await expect(queues.upsertSchedule(queue, 'tick', { everyMs: 60_000 }, { data: 1 })).resolves.toEqual({
      ...created,
      outcome: 'unchanged',
    });
    await expectRefusedUnwritten(
      queue,
      () => queues.upsertSchedule(queue, 'tick', { everyMs: 30_000 }, { data: 2 }),
      'emqUpsertSchedule',
    );
  });
});
