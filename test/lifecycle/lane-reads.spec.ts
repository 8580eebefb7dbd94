import { Redis } from 'ioredis';
import {
  countPending,
  enqueueJobs,
  pauseLane,
  readLanes,
  resumeLane,
  setLaneSettings,
  writeLimits,
  type LaneView,
  type ScriptContext,
} from '@app/echomq/internal';
import { jobRecord } from '../support/assertions';
import { claimSome } from '../support/claims';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

/** A lane as readLanes shows one with no settings, no work and nothing holding it. */
function lane(name: string, view: Partial<Omit<LaneView, 'lane'>> = {}): LaneView {
  return {
    lane: name,
    pending: 0,
    active: 0,
    paused: false,
    held: false,
    weight: 1,
    concurrency: null,
    ...view,
  };
}

describe('lane reads: every lane with work, its state and its settings', () => {
  let redis: Redis;
  const mint = idMinter(42);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function context(): ScriptContext {
    return scriptContext(redis, uniqueQueue('lanes'));
  }

  async function enqueue(ctx: ScriptContext, places: readonly [string, number][]): Promise<string[]> {
    const records = places.map(([name, priority]) => jobRecord(mint(), { lane: name, priority }));
    await enqueueJobs(ctx, records, 60_000);
    return records.map((record) => record.id);
  }

  it('an empty queue has no lanes', async () => {
    expect(await readLanes(context())).toEqual([]);
  });

  it('a queue without lanes lists the default lane while it has jobs', async () => {
    const ctx = context();
    await enqueue(ctx, [
      ['default', 0],
      ['default', 0],
    ]);
    expect(await readLanes(ctx)).toEqual([lane('default', { pending: 2 })]);
  });

  it("sums each lane's pending over its levels, sorted by name in byte order", async () => {
    const ctx = context();
    await enqueue(ctx, [
      ['tenant-b', 0],
      ['default', 4],
      ['Zeta', 9],
      ['tenant-b', 9],
      ['default', 0],
      ['tenant-b', 3],
      ['alpha', 0],
      ['tenant-b', 3],
    ]);
    const lanes = await readLanes(ctx);
    expect(lanes).toEqual([
      lane('Zeta', { pending: 1 }),
      lane('alpha', { pending: 1 }),
      lane('default', { pending: 2 }),
      lane('tenant-b', { pending: 4 }),
    ]);
    expect(lanes.reduce((sum, view) => sum + view.pending, 0)).toBe(await countPending(ctx));
  });

  it('counts active jobs per lane; a lane whose jobs are all claimed is still listed', async () => {
    const ctx = context();
    await enqueue(ctx, [
      ['tenant-a', 0],
      ['tenant-a', 2],
    ]);
    await claimSome(ctx, 2);
    await enqueue(ctx, [['tenant-b', 0]]);
    expect(await readLanes(ctx)).toEqual([lane('tenant-a', { active: 2 }), lane('tenant-b', { pending: 1 })]);
  });

  it('a paused lane is listed as paused and held, with or without work', async () => {
    const ctx = context();
    await enqueue(ctx, [
      ['tenant-p', 0],
      ['tenant-p', 6],
      ['tenant-q', 0],
    ]);
    await pauseLane(ctx, 'tenant-p');
    await pauseLane(ctx, 'idle-lane');
    const lanes = await readLanes(ctx);
    expect(lanes).toEqual([
      lane('idle-lane', { paused: true, held: true }),
      lane('tenant-p', { pending: 2, paused: true, held: true }),
      lane('tenant-q', { pending: 1 }),
    ]);
    expect(lanes.reduce((sum, view) => sum + view.pending, 0)).toBe(await countPending(ctx));
  });

  it('a resumed lane is no longer paused or held; one paused with no work is gone', async () => {
    const ctx = context();
    await enqueue(ctx, [['tenant-p', 3]]);
    await pauseLane(ctx, 'tenant-p');
    await pauseLane(ctx, 'idle-lane');
    await resumeLane(ctx, 'tenant-p');
    await resumeLane(ctx, 'idle-lane');
    expect(await readLanes(ctx)).toEqual([lane('tenant-p', { pending: 1 })]);
  });

  it('a lane its cap holds back is listed as held, with its active and pending jobs', async () => {
    const ctx = context();
    await setLaneSettings(ctx, 'capped', { concurrency: 1 });
    await enqueue(ctx, [
      ['capped', 0],
      ['capped', 0],
      ['free', 0],
    ]);
    await claimSome(ctx, 3);
    expect(await readLanes(ctx)).toEqual([
      lane('capped', { pending: 1, active: 1, held: true, concurrency: 1 }),
      lane('free', { active: 1 }),
    ]);
  });

  it("shows a lane's own weight and cap, else the queue's laneConcurrency", async () => {
    const ctx = context();
    await enqueue(ctx, [
      ['heavy', 0],
      ['light', 0],
    ]);
    await setLaneSettings(ctx, 'heavy', { weight: 5, concurrency: 2 });
    expect(await readLanes(ctx)).toEqual([
      lane('heavy', { pending: 1, weight: 5, concurrency: 2 }),
      lane('light', { pending: 1 }),
    ]);
    await writeLimits(ctx, { laneConcurrency: 8 });
    expect(await readLanes(ctx)).toEqual([
      lane('heavy', { pending: 1, weight: 5, concurrency: 2 }),
      lane('light', { pending: 1, concurrency: 8 }),
    ]);
  });

  it('lists a lane with settings of its own and no work, until its settings are cleared', async () => {
    const ctx = context();
    await setLaneSettings(ctx, 'configured', { weight: 3 });
    expect(await readLanes(ctx)).toEqual([
      { lane: 'configured', pending: 0, active: 0, paused: false, held: false, weight: 3, concurrency: null },
    ]);
    await setLaneSettings(ctx, 'configured', { weight: null });
    expect(await readLanes(ctx)).toEqual([]);
    expect(await redis.exists(ctx.keys.configuredLanes)).toBe(0);
  });

  it('reading the lanes writes nothing', async () => {
    const ctx = context();
    await enqueue(ctx, [
      ['tenant-a', 1],
      ['tenant-b', 0],
    ]);
    await pauseLane(ctx, 'tenant-b');
    const dump = async (): Promise<Record<string, string>> => {
      const out: Record<string, string> = {};
      for (const key of (await redis.keys(`${ctx.keys.base}*`)).sort()) {
        out[key] = (await redis.dumpBuffer(key)).toString('hex');
      }
      return out;
    };
    const before = await dump();
    await readLanes(ctx);
    expect(await dump()).toEqual(before);
  });
});
