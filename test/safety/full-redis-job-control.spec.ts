import type { INestApplication } from '@nestjs/common';
import { QueueService } from '@app/echomq';
import { claimJobs, failJob, queueKeys } from '@app/echomq/internal';
import { Redis } from 'ioredis';
import { startApi, type RunningApi } from '../api/support/api';
import { expectConsistent } from '../support/assertions';
import { CapturedLog } from '../support/captured-log';
import { uniqueQueue } from '../support/redis';
import type { RedisServer } from '../support/redis-server';
import { closeAll } from '../worker/fixtures/support';
import { bootLogged } from './support/apps';
import { fill, makeRoom, refusesWrites, startNoEvictionServer, stateSets } from './support/full-redis';

/** Jobs per job-control script call (CONTROL_CHUNK_MAX): a multiple of it ends on a call that finds nothing. */
const CHUNK = 500;

/**
 * Obliterate, clean and drain free room, so a full Redis (maxmemory reached, noeviction) must
 * let them run, including the call of a chunked walk that finds nothing left (its reply record
 * is then its first write), and none may report "nothing was written" after removing jobs.
 */
describe('job control on a full Redis', () => {
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
      nodeId: 63,
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

  /** `count` jobs of a new queue sent to dead (unrecoverable), with Redis not yet full. */
  async function deadJobs(count: number): Promise<{ queue: string; ids: string[] }> {
    const queue = uniqueQueue('full-dead');
    const ids = await queues.enqueueMany(
      queue,
      Array.from({ length: count }, (_, n) => ({ data: n })),
    );
    const ctx = queues.context(queue);
    const { jobs } = await claimJobs(ctx, { count, leaseMs: 60_000, claimantPrefix: 'test' });
    for (const job of jobs) await failJob(ctx, job, { error: 'bad', backoffMs: 0, unrecoverable: true });
    expect((await queues.counts(queue)).dead).toBe(count);
    return { queue, ids };
  }

  it('obliterates a queue, which frees its keys', async () => {
    const queue = uniqueQueue('full-obliterate');
    const keys = queueKeys(queue);
    const ids = await queues.enqueueMany(
      queue,
      Array.from({ length: 10 }, (_, n) => ({ data: n, ...(n < 3 ? { delayMs: 600_000 } : {}) })),
    );
    await fill(admin);

    await expect(queues.obliterate(queue)).resolves.toEqual({ removed: 10 });
    expect(await stateSets(admin, keys)).toEqual({ pending: {}, active: {}, schedule: {}, dead: {} });
    expect(await admin.exists(...ids.map((id) => keys.job(id)), keys.metrics, keys.format)).toBe(0);
    expect(await refusesWrites(admin)).toBe(true);
  });

  it('drains a schedule of exactly one chunk, whose last call finds nothing', async () => {
    const queue = uniqueQueue('full-drain');
    await queues.enqueueMany(
      queue,
      Array.from({ length: CHUNK }, (_, n) => ({ data: n, delayMs: 600_000 })),
    );
    await fill(admin);

    await expect(queues.drain(queue)).resolves.toBe(CHUNK);
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    // A drain of the queue now empty: every call finds nothing.
    await expect(queues.drain(queue)).resolves.toBe(0);
    expect(await refusesWrites(admin)).toBe(true);
    await makeRoom(admin);
    await expectConsistent(admin, queueKeys(queue));
  });

  it('cleans dead jobs in full chunks, and answers a clean that finds nothing', async () => {
    const { queue, ids } = await deadJobs(CHUNK);
    const fresh = uniqueQueue('full-clean-none');
    await queues.enqueue(fresh, 'young');
    await fill(admin);

    const cleaned = await queues.clean(queue, 'dead', { olderThanMs: 0, limit: 2 * CHUNK });
    expect([...cleaned].sort()).toEqual([...ids].sort());
    expect((await queues.counts(queue)).dead).toBe(0);
    await expect(queues.clean(queue, 'dead', { olderThanMs: 0 })).resolves.toEqual([]);
    await expect(queues.clean(fresh, 'pending', { olderThanMs: 3_600_000 })).resolves.toEqual([]);
    expect((await queues.counts(fresh)).pending).toBe(1);
    expect(await refusesWrites(admin)).toBe(true);
    await makeRoom(admin);
    await expectConsistent(admin, queueKeys(queue));
  });

  describe('over HTTP', () => {
    let api: RunningApi;

    beforeAll(async () => {
      api = await startApi({ REDIS_URL: server.url, EMQ_NODE_ID: '64' });
    });
    afterAll(async () => {
      await api.close();
    });

    async function post(path: string, body: unknown = {}): Promise<{ status: number; body: unknown }> {
      const response = await fetch(`${api.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    }

    it('answers 200 to clean, drain and obliterate', async () => {
      const { queue } = await deadJobs(3);
      await queues.enqueueMany(queue, [{ data: 'waiting' }, { data: 'later', delayMs: 600_000 }]);
      const doomed = uniqueQueue('full-http-obliterate');
      await queues.enqueueMany(doomed, [{ data: 1 }, { data: 2 }, { data: 3, delayMs: 600_000 }]);
      await fill(admin);

      const cleaned = await post(`/queues/${queue}/clean`, { state: 'dead', olderThanMs: 0 });
      expect(cleaned).toMatchObject({ status: 200, body: { queue, state: 'dead' } });
      expect((cleaned.body as { ids: string[] }).ids).toHaveLength(3);
      await expect(post(`/queues/${queue}/drain`)).resolves.toEqual({
        status: 200,
        body: { queue, removed: 2 },
      });
      await expect(post(`/queues/${doomed}/obliterate`)).resolves.toEqual({
        status: 200,
        body: { queue: doomed, removed: 3 },
      });
      expect(await refusesWrites(admin)).toBe(true);
    });
  });
});
