import {
  obliterateChunk,
  QueueBusyError,
  queueRegistryKey,
  setLaneSettings,
  pauseLane,
  writeLimits,
  type ScriptContext,
} from '@app/echomq/internal';
import { obliterateQueue } from '@app/echomq/queue/job-control/obliterate-queue';
import type { Redis } from 'ioredis';
import { events, jobRecord } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { claimUpTo, expectFlowConsistent } from '../lifecycle/support/flow';
import { deadJobs, dumpQueue, enqueue, expectEveryRowInOneSet, queueKeysOf, repeat } from './support/control';

describe('obliterate: the whole queue -> gone, in bounded chunks', () => {
  let redis: Redis;
  const mint = idMinter(50);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  /** The queue's keys that will not expire by themselves (replay records, idempotency keys... have a TTL). */
  const lasting = async (ctx: ScriptContext): Promise<string[]> => {
    const keys: string[] = [];
    for (const key of await queueKeysOf(redis, ctx.keys.queue))
      if ((await redis.pttl(key)) < 0) keys.push(key);
    return keys;
  };

  const context = (): ScriptContext => scriptContext(redis, uniqueQueue('obliterate'));

  /** Jobs in every state and lane, lane settings, a paused lane, limits, a schedule, the registry entry. */
  async function fullQueue(ctx: ScriptContext): Promise<void> {
    await deadJobs(ctx, [mint(), mint()], { lane: 'vip' });
    await enqueue(ctx, [
      ...Array.from({ length: 700 }, (_, i) => jobRecord(mint(), { lane: `t${i % 7}`, priority: i % 3 })),
      jobRecord(mint(), { delayMs: 60_000, idempotencyKey: 'once' }),
    ]);
    await setLaneSettings(ctx, 't1', { weight: 3, concurrency: 2 }, 'lane-req-1');
    await pauseLane(ctx, 't2', 'pause-req-1');
    await writeLimits(ctx, { globalConcurrency: 10 }, 'limits-req-1');
    await redis.hset(ctx.keys.schedulers, 'nightly', '{}');
    await redis.hset(ctx.keys.schedulerNext, 'nightly', mint());
    await redis.set(ctx.keys.format, '1');
    await redis.sadd(queueRegistryKey(), ctx.keys.queue);
  }

  it('removes every job and key of the queue and its registry entry; only the last event is left', async () => {
    const ctx = context();
    await fullQueue(ctx);

    expect(await obliterateQueue(ctx, undefined, repeat)).toEqual({ removed: 703 });

    expect(await lasting(ctx)).toEqual([ctx.keys.events]);
    expect(await redis.sismember(queueRegistryKey(), ctx.keys.queue)).toBe(0);
    const [last] = await events(redis, ctx.keys);
    expect(last.fields).toMatchObject({ type: 'obliterated', done: '1', removed: '703' });
  });

  it('refuses while workers hold jobs, writing nothing; with force announces each on the cancels stream', async () => {
    const ctx = context();
    await enqueue(ctx, [jobRecord(mint()), jobRecord(mint(), { lane: 'vip' }), jobRecord(mint())]);
    const claimed = await claimUpTo(ctx, 2);
    const before = await dumpQueue(redis, ctx.keys.queue);
    const refused = obliterateQueue(ctx, {}, repeat);
    await expect(refused).rejects.toBeInstanceOf(QueueBusyError);
    await expect(obliterateQueue(ctx, {}, repeat)).rejects.toThrow(/2 active jobs/);
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);

    expect(await obliterateQueue(ctx, { force: true }, repeat)).toEqual({ removed: 3 });
    const cancels = await redis.xrange(ctx.keys.cancels, '-', '+');
    expect(cancels.map(([, fields]) => fields)).toEqual(
      claimed.map((job) => ['id', job.id, 'attempt', String(job.attempt)]),
    );
    // Left to expire: workers may still be reading it.
    expect(await redis.pttl(ctx.keys.cancels)).toBeGreaterThan(0);
    expect(await lasting(ctx)).toEqual([ctx.keys.events]);
  });

  it('keeps every invariant between chunks, and answers a repeated chunk with its first outcome', async () => {
    const ctx = context();
    await fullQueue(ctx);
    const first = await obliterateChunk(
      ctx,
      { force: false, limit: 300, removedBefore: 0, cursor: 'p' },
      'oblit-1',
    );
    expect(first).toMatchObject({ removed: 300, done: false, again: false });
    expect(await redis.get(ctx.keys.paused)).toBe('1');
    expect(await redis.exists(ctx.keys.schedulers)).toBe(0);
    await expectFlowConsistent(redis, ctx.keys);
    const rows = await expectEveryRowInOneSet(redis, ctx.keys);
    expect(rows).toHaveLength(403);
    const before = await dumpQueue(redis, ctx.keys.queue);
    expect(
      await obliterateChunk(ctx, { force: false, limit: 300, removedBefore: 0, cursor: 'p' }, 'oblit-1'),
    ).toEqual(first);
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
  });
});
