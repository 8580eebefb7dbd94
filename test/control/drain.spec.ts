import { drainChunk, InvalidArgumentError, type ScriptContext } from '@app/echomq/internal';
import { drainQueue } from '@app/echomq/queue/job-control/drain-queue';
import type { Redis } from 'ioredis';
import { events, expectConsistent, jobRecord, metrics } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { claimUpTo, enqueueIn, expectFlowConsistent } from '../lifecycle/support/flow';
import { deadJobs, dumpQueue, enqueue, expectEveryRowInOneSet, repeat } from './support/control';

describe('drain: pending (every lane and level) and schedule -> gone', () => {
  let redis: Redis;
  const mint = idMinter(41);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  const context = (): ScriptContext => scriptContext(redis, uniqueQueue('drain'));

  /** A queue with work everywhere: lanes at levels, a delayed job, an active one, a dead one. */
  async function busyQueue(ctx: ScriptContext) {
    const [dead] = await deadJobs(ctx, [mint()]);
    await enqueue(ctx, [jobRecord(mint(), { lane: 'busy' })]);
    const [active] = await claimUpTo(ctx, 1);
    const pending = await enqueueIn(ctx, mint, [
      ['default', 0],
      ['vip', 0],
      ['vip', 5],
      ['tenant-a', 9],
    ]);
    const keyed = mint();
    await enqueue(ctx, [jobRecord(keyed, { idempotencyKey: 'order-1', lane: 'tenant-a' })]);
    const [scheduled] = await enqueue(ctx, [jobRecord(mint(), { delayMs: 60_000, lane: 'vip' })]);
    return { pending: [...pending, keyed], scheduled, dead, active: active.id };
  }

  it('removes every pending and scheduled job with its row and idempotency key; active and dead stay', async () => {
    const ctx = context();
    const jobs = await busyQueue(ctx);
    const removed = await drainQueue(ctx, undefined, repeat);

    const snap = await expectConsistent(redis, ctx.keys);
    const left = Object.keys(snap.rows).sort();
    expect(left).toEqual([jobs.active, jobs.dead].sort());
    expect(removed).toBe(jobs.pending.length + 1);
    expect(snap.sets.schedule).toEqual({});
    expect(await redis.exists(ctx.keys.idempotency('order-1'))).toBe(0);
    const flow = await expectFlowConsistent(redis, ctx.keys);
    expect(flow.pending).toEqual({});
    expect((await metrics(redis, ctx.keys)).drained).toBe(removed);
    const drained = (await events(redis, ctx.keys)).filter((e) => e.fields.type === 'drained');
    expect(drained.flatMap((e) => e.fields.ids.split(',')).sort()).toEqual(
      [...jobs.pending, jobs.scheduled].sort(),
    );
  });

  it('keeps scheduled jobs when asked', async () => {
    const ctx = context();
    const jobs = await busyQueue(ctx);
    await drainQueue(ctx, { keepScheduled: true }, repeat);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(await expectEveryRowInOneSet(redis, ctx.keys)).toEqual(Object.keys(snap.rows).sort());
    expect(Object.keys(snap.sets.schedule)).toEqual([jobs.scheduled]);
    expect(Object.keys(snap.rows).sort()).toEqual([jobs.active, jobs.dead, jobs.scheduled].sort());
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('goes in chunks of at most 500 jobs, each a call of its own', async () => {
    const ctx = context();
    const lanes = ['a', 'b', 'c'];
    await enqueue(
      ctx,
      Array.from({ length: 1_200 }, (_, i) => jobRecord(mint(), { lane: lanes[i % 3], priority: i % 2 })),
    );
    expect(await drainQueue(ctx, {}, repeat)).toBe(1_200);
    const chunks = (await events(redis, ctx.keys)).filter((e) => e.fields.type === 'drained');
    expect(chunks.map((e) => e.fields.ids.split(',').length)).toEqual([500, 500, 200]);
    await expectFlowConsistent(redis, ctx.keys);
    expect((await expectConsistent(redis, ctx.keys)).rows).toEqual({});
  });

  it('answers a repeated chunk with its first outcome and drains nothing more', async () => {
    const ctx = context();
    await enqueue(ctx, [jobRecord(mint()), jobRecord(mint())]);
    const first = await drainChunk(ctx, { keepScheduled: false, limit: 500, cursor: 'p' }, 'drain-req-1');
    const late = mint();
    await enqueue(ctx, [jobRecord(late)]);
    expect(await drainChunk(ctx, { keepScheduled: false, limit: 500, cursor: 'p' }, 'drain-req-1')).toEqual(
      first,
    );
    expect(first).toEqual({ count: 2, more: false, cursor: '' });
    expect(await redis.zrange(ctx.keys.pending, 0, -1)).toEqual([late]);
  });

  it('refuses bad options before anything is sent', async () => {
    const ctx = context();
    await enqueue(ctx, [jobRecord(mint())]);
    const before = await dumpQueue(redis, ctx.keys.queue);
    await expect(drainQueue(ctx, { keepScheduled: 'yes' as never }, repeat)).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(drainQueue(ctx, { keep: true } as never, repeat)).rejects.toThrow(/unknown: keep/);
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
  });
});
