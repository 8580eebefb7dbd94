import { pauseLane, enqueueJobs, promoteDue, type ScriptContext } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { backdate, events, expectConsistent, jobRecord, metrics } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { at, enqueueIn, expectFlowConsistent } from './support/flow';

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
  describe('with lanes and priorities', () => {
    it('moves each due job into its own lane at its level and offers the lane there', async () => {
      const ctx = scriptContext(redis, uniqueQueue('promote-lanes'));
      const ids = await enqueueIn(
        ctx,
        mint,
        [
          ['acme', 8],
          ['globex', 0],
          ['default', 0],
          ['acme', 8],
        ],
        { delayMs: 60_000 },
      );
      for (const id of ids.slice(0, 3)) await backdate(redis, ctx.keys.schedule, id);
      expect(await promoteDue(ctx, 100)).toEqual({ promoted: 3, more: false });
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.pending).toEqual({
        [at('acme', 8)]: [ids[0]],
        [at('globex')]: [ids[1]],
        [at('default')]: [ids[2]],
      });
      expect(Object.keys(flow.ready[8] ?? {})).toEqual(['acme']);
      expect(Object.keys(flow.ready[0] ?? {}).sort()).toEqual(['default', 'globex']);
      expect(await redis.zrange(ctx.keys.schedule, 0, -1)).toEqual([ids[3]]);
    });

    it("into a held lane: the job waits there, its level noted for the lane's return", async () => {
      const ctx = scriptContext(redis, uniqueQueue('promote-lanes'));
      await pauseLane(ctx, 'acme');
      const [id] = await enqueueIn(ctx, mint, [['acme', 1]], { delayMs: 60_000 });
      await backdate(redis, ctx.keys.schedule, id);
      await promoteDue(ctx, 100);
      const flow = await expectFlowConsistent(redis, ctx.keys);
      expect(flow.held).toEqual({ acme: '1' });
      expect(flow.ready).toEqual({});
    });
  });
});
