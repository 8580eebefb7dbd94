import { enqueueJobs, promoteDue, type ScriptContext } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { backdate, events, expectConsistent, jobRecord, metrics } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

describe('promote: schedule -> pending when run-at is reached', () => {
  let redis: Redis;
  const mint = idMinter(18);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function scheduled(count: number): Promise<{ ctx: ScriptContext; ids: string[] }> {
    const ctx = scriptContext(redis, uniqueQueue('promote'));
    const ids = Array.from({ length: count }, () => mint());
    await enqueueJobs(
      ctx,
      ids.map((id) => jobRecord(id, { delayMs: 60_000 })),
      60_000,
    );
    return { ctx, ids };
  }

  it('moves due jobs only, counts them, emits the event and wakes a worker', async () => {
    const { ctx, ids } = await scheduled(2);
    const [due, later] = ids;
    const laterAt = Number(await redis.zscore(ctx.keys.schedule, later));
    await backdate(redis, ctx.keys.schedule, due);
    const rowsBefore = (await expectConsistent(redis, ctx.keys)).rows;
    await redis.del(ctx.keys.wake);

    expect(await promoteDue(ctx, 100)).toEqual({ promoted: 1, more: false });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.pending).toEqual({ [due]: 0 });
    expect(snap.sets.schedule).toEqual({ [later]: laterAt });
    expect(snap.rows).toEqual(rowsBefore);
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 2, promoted: 1 });
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({ type: 'promoted', ids: due });
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
  });

  it('a job whose run-at is exactly now is due', async () => {
    const { ctx, ids } = await scheduled(1);
    await backdate(redis, ctx.keys.schedule, ids[0], 0);
    expect((await promoteDue(ctx, 10)).promoted).toBe(1);
  });

  it('is bounded per call and says when more due jobs remain', async () => {
    const { ctx, ids } = await scheduled(3);
    for (const id of ids) await backdate(redis, ctx.keys.schedule, id);
    expect(await promoteDue(ctx, 2)).toEqual({ promoted: 2, more: true });
    expect(await promoteDue(ctx, 2)).toEqual({ promoted: 1, more: false });
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.sets.pending)).toEqual(ids);
    expect(snap.sets.schedule).toEqual({});
  });

  it('with nothing due changes nothing and emits nothing', async () => {
    const { ctx } = await scheduled(2);
    const before = await expectConsistent(redis, ctx.keys);
    const eventCount = await redis.xlen(ctx.keys.events);
    expect(await promoteDue(ctx, 100)).toEqual({ promoted: 0, more: false });
    expect(await expectConsistent(redis, ctx.keys)).toEqual(before);
    expect(await redis.xlen(ctx.keys.events)).toBe(eventCount);
    expect((await metrics(redis, ctx.keys)).promoted).toBeUndefined();
  });

  it('promoted jobs line up in pending by mint order, behind nothing and ahead of nothing newer', async () => {
    const ctx = scriptContext(redis, uniqueQueue('promote'));
    const [old, mid, young] = [mint(), mint(), mint()];
    await enqueueJobs(
      ctx,
      [jobRecord(old, { delayMs: 60_000 }), jobRecord(mid), jobRecord(young, { delayMs: 60_000 })],
      60_000,
    );
    await backdate(redis, ctx.keys.schedule, young);
    await backdate(redis, ctx.keys.schedule, old);
    await promoteDue(ctx, 10);
    expect(await redis.zrange(ctx.keys.pending, 0, -1)).toEqual([old, mid, young]);
  });
});
