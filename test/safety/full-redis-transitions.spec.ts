import { Redis } from 'ioredis';
import {
  RedisOutOfMemoryError,
  StaleJobError,
  claimJobs,
  completeJobs,
  enqueueJobs,
  extendLeases,
  failJob,
  installScripts,
  promoteDue,
  queueKeys,
  reapExpired,
  recordProgress,
  releaseJobs,
  removeJob,
  retryDead,
  drainChunk,
  WALK_START,
  type ScriptContext,
} from '@app/echomq/internal';
import { backdate, expectConsistent, jobRecord, metrics } from '../support/assertions';
import { idMinter, uniqueQueue } from '../support/redis';
import type { RedisServer } from '../support/redis-server';
import { fill, makeRoom, refusesWrites, startNoEvictionServer, stateSets } from './support/full-redis';

/**
 * What a full Redis (maxmemory reached, noeviction) still lets EchoMQ do. It refuses a
 * script's first write when that write may grow memory, and never a later one; so enqueue,
 * which only grows, is refused having written nothing, while every transition that moves or
 * frees jobs runs, so that workers drain the queue and free room.
 */
describe('a full Redis', () => {
  let server: RedisServer;
  let admin: Redis;
  let client: Redis;
  const mint = idMinter(41);

  beforeAll(async () => {
    server = await startNoEvictionServer();
    admin = new Redis(server.url);
    client = new Redis(server.url);
  });
  afterEach(async () => {
    await makeRoom(admin);
  });
  afterAll(async () => {
    admin.disconnect();
    client.disconnect();
    await server.destroy();
  });

  function context(): ScriptContext {
    return { redis: installScripts(client), keys: queueKeys(uniqueQueue('full')), eventsMaxLen: 1000 };
  }

  it('refuses enqueue with RedisOutOfMemoryError, having written nothing', async () => {
    const ctx = context();
    await enqueueJobs(ctx, [jobRecord(mint()), jobRecord(mint(), { delayMs: 60_000 })], 60_000);
    const before = { keys: await admin.dbsize(), sets: await stateSets(admin, ctx.keys) };
    await fill(admin);

    const refusals = [
      enqueueJobs(ctx, [jobRecord(mint())], 60_000),
      enqueueJobs(ctx, [jobRecord(mint(), { idempotencyKey: 'once' })], 60_000),
      enqueueJobs(
        ctx,
        [jobRecord(mint(), { delayMs: 5_000 }), jobRecord(mint(), { lane: 'tenant-a' })],
        60_000,
      ),
    ];
    for (const refusal of refusals) {
      const error = await refusal.then(
        () => new Error('enqueued on a full Redis'),
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(RedisOutOfMemoryError);
      expect(error).toMatchObject({ code: 'REDIS_OUT_OF_MEMORY', target: `127.0.0.1:${server.port}` });
      expect((error as Error).message).toMatch(/refused emqEnqueue; nothing was written/);
    }
    expect(await refusesWrites(admin)).toBe(true);
    expect({ keys: await admin.dbsize(), sets: await stateSets(admin, ctx.keys) }).toEqual(before);
  });

  it('still promotes, claims, extends, completes, fails, releases and reaps, and refuses a progress write', async () => {
    const ctx = context();
    const ids = Array.from({ length: 6 }, () => mint());
    const later = mint();
    await enqueueJobs(
      ctx,
      [...ids.map((id) => jobRecord(id)), jobRecord(later, { delayMs: 60_000 })],
      60_000,
    );
    await backdate(admin, ctx.keys.schedule, later);
    await fill(admin);

    expect(await promoteDue(ctx, 10)).toEqual({ promoted: 1, more: false });
    const { jobs } = await claimJobs(ctx, { count: 10, leaseMs: 30_000, claimantPrefix: 'w1' });
    expect(jobs.map((job) => job.id)).toEqual([...ids, later]);
    const [deleted, retained, retried, doomed, released, expired, last] = jobs;
    expect((await extendLeases(ctx, jobs, 60_000)).held).toEqual(jobs.map(() => true));
    expect(await completeJobs(ctx, [{ claim: deleted, result: '"ok"' }], 0)).toEqual([true]);
    // Keeping the row with its result is a growing write: it comes after the job left active.
    expect(await completeJobs(ctx, [{ claim: retained, result: '"kept"' }], 60_000)).toEqual([true]);
    const retry = { error: 'boom', backoffMs: 5_000, unrecoverable: false };
    expect(await failJob(ctx, retried, retry)).toMatchObject({ state: 'schedule' });
    expect(await failJob(ctx, doomed, { ...retry, unrecoverable: true })).toEqual({ state: 'dead' });
    expect(await releaseJobs(ctx, [released])).toEqual([true]);
    // (Time passing for one lease is a growing write of the test's own: made with room.)
    await makeRoom(admin);
    await backdate(admin, ctx.keys.active, expired.id);
    await fill(admin);
    expect(await reapExpired(ctx, 10)).toEqual({ toPending: 1, toDead: 0, more: false });
    // Stale calls (nothing to move) run too, and say so: a counter and the reply are their only writes.
    expect(await completeJobs(ctx, [{ claim: deleted, result: '"again"' }], 0)).toEqual([false]);
    await expect(failJob(ctx, deleted, retry)).rejects.toBeInstanceOf(StaleJobError);
    expect(await releaseJobs(ctx, [deleted])).toEqual([false]);
    // A progress write only grows a running job's row: refused like enqueue, and typed.
    await expect(recordProgress(ctx, last, '{"step":1}')).rejects.toBeInstanceOf(RedisOutOfMemoryError);
    expect(await completeJobs(ctx, [{ claim: last, result: '' }], 0)).toEqual([true]);
    expect(await refusesWrites(admin)).toBe(true);

    expect(await stateSets(admin, ctx.keys)).toEqual({
      pending: { [released.id]: 0, [expired.id]: 0 },
      active: {},
      schedule: { [retried.id]: expect.any(Number) },
      dead: { [doomed.id]: 0 },
    });
    await makeRoom(admin);
    const snap = await expectConsistent(admin, ctx.keys);
    expect(snap.rows[retained.id]).toMatchObject({ r: '"kept"' });
    expect(await metrics(admin, ctx.keys)).toMatchObject({
      enqueued: 7,
      promoted: 1,
      claimed: 7,
      extended: 7,
      completed: 3,
      failed: 1,
      dead: 1,
      released: 1,
      reaped: 1,
      stale: 3,
    });
  });

  it('lets an operator free room: remove, retry from dead and drain run', async () => {
    const ctx = context();
    const [doomed, later, ...waiting] = Array.from({ length: 5 }, () => mint());
    await enqueueJobs(
      ctx,
      [jobRecord(doomed), jobRecord(later, { delayMs: 60_000 }), ...waiting.map((id) => jobRecord(id))],
      60_000,
    );
    const [claim] = (await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: 'w2' })).jobs;
    expect(claim.id).toBe(doomed);
    await failJob(ctx, claim, { error: 'doomed', backoffMs: 0, unrecoverable: true });
    await fill(admin);

    expect(await removeJob(ctx, later)).toBe('schedule');
    await retryDead(ctx, doomed);
    // The three waiting and the retried one.
    expect(await drainChunk(ctx, { keepScheduled: false, limit: 100, cursor: WALK_START })).toMatchObject({
      count: 4,
    });
    expect(await refusesWrites(admin)).toBe(true);
    expect(await stateSets(admin, ctx.keys)).toEqual({ pending: {}, active: {}, schedule: {}, dead: {} });
  });
});
