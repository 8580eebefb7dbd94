import {
  claimJobs,
  cleanChunk,
  pauseLane,
  resumeLane,
  WALK_START,
  type ScriptContext,
} from '@app/echomq/internal';
import { cleanJobs } from '@app/echomq/queue/job-control/clean-jobs';
import { WALKS_MAX } from '@app/echomq/scripts/lua/pending-sets';
import { drainQueue } from '@app/echomq/queue/job-control/drain-queue';
import type { Redis } from 'ioredis';
import { jobRecord } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { expectFlowConsistent } from '../lifecycle/support/flow';
import { enqueue, expectEveryRowInOneSet, oldIds, repeat } from './support/control';
import { beforeEachCall } from './support/intercept';
import { listpackLanes } from './support/listpack';

/**
 * The walk over the lanes' pending sets while the lanes change between its calls: lanes that
 * move from held to ready behind the cursor, claims that take lanes out of ready ahead of it,
 * and a held hash whose one HSCAN page holds more sets than a call may visit.
 */
describe('the walk over pending sets, between calls and within a held page', () => {
  let redis: Redis;
  const mint = idMinter(57);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function pauseAll(ctx: ScriptContext, lanes: readonly string[]): Promise<void> {
    for (let at = 0; at < lanes.length; at += 200) {
      await Promise.all(lanes.slice(at, at + 200).map((lane) => pauseLane(ctx, lane)));
    }
  }

  it('drain removes a job whose lane went from held to ready behind the walk', async () => {
    // 1,200 paused lanes: held is a hashtable, so its HSCAN goes page by page over calls.
    const ctx = scriptContext(redis, uniqueQueue('walk-drain'));
    const lanes = Array.from({ length: 1_200 }, (_, i) => `t${i}`);
    await enqueue(
      ctx,
      lanes.map((lane) => jobRecord(mint(), { lane })),
    );
    await pauseAll(ctx, lanes);
    let resumed = '';
    const hooked = beforeEachCall(ctx, 'emqDrain', async (call) => {
      if (call !== 1) return;
      // After the first call (past the ready phase, inside held): resume a lane not reached yet.
      const held = await redis.hgetall(ctx.keys.held);
      const waiting = Object.entries(held).filter(([, levels]) => levels !== '');
      resumed = waiting[waiting.length - 1][0];
      await resumeLane(ctx, resumed);
    });

    expect(await drainQueue(hooked, undefined, repeat)).toBe(lanes.length);
    expect(resumed).not.toBe('');
    expect(await expectEveryRowInOneSet(redis, ctx.keys)).toEqual([]);
    expect((await expectFlowConsistent(redis, ctx.keys)).pending).toEqual({});
  });

  it('clean(pending) removes an old job whose lane left held behind the walk, having removed nothing else', async () => {
    // 1,200 paused lanes of young jobs, and paused lane x with one job an hour old.
    const ctx = scriptContext(redis, uniqueQueue('walk-clean-resume'));
    const lanes = Array.from({ length: 1_200 }, (_, i) => `t${i}`);
    await enqueue(
      ctx,
      lanes.map((lane) => jobRecord(mint(), { lane })),
    );
    const [oldJob] = await enqueue(ctx, [jobRecord(oldIds(60, 3_600_000)(), { lane: 'x' })]);
    await pauseAll(ctx, [...lanes, 'x']);
    const hooked = beforeEachCall(ctx, 'emqClean', async (call) => {
      // After the first call (past the ready phase, inside held): x goes back to ready.
      if (call === 1) await resumeLane(ctx, 'x');
    });

    expect(await cleanJobs(hooked, 'pending', { olderThanMs: 1_800_000 }, repeat)).toEqual([oldJob]);
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('drain begins at most WALKS_MAX walks, also when its schedule phase fills chunks under a producer', async () => {
    const ctx = scriptContext(redis, uniqueQueue('walk-drain-bound'));
    const lanes = Array.from({ length: 10 }, (_, i) => `t${i}`);
    await enqueue(
      ctx,
      Array.from({ length: 12_000 }, (_, i) => jobRecord(mint(), { delayMs: 600_000, lane: lanes[i % 10] })),
    );
    let walks = 0;
    const hooked = beforeEachCall(ctx, 'emqDrain', async (_call, args) => {
      // (12,000 scheduled jobs: a walk begun after each 1,000 of them would pass WALKS_MAX.)
      // The cursor is the last argument: 'p', or a walk's first position 'w<walk>:0:<held>:p'.
      if (/^(w\d+:0:\d+:)?p$/.test(String(args[args.length - 1]))) walks++;
      // A producer: one pending job before every call, so every walk finds something.
      await enqueue(ctx, [jobRecord(mint(), { lane: lanes[walks % 10] })]);
    });

    await drainQueue(hooked, undefined, repeat);
    console.log(`drain under a producer with 12,000 scheduled jobs: ${walks} walks`);
    expect(walks).toBeLessThanOrEqual(WALKS_MAX);
    expect(await redis.zcard(ctx.keys.schedule)).toBe(0);
  });

  it('clean(pending) visits, in one walk, lanes that stayed put while claims served the front', async () => {
    const ctx = scriptContext(redis, uniqueQueue('walk-clean'));
    const old = oldIds(58, 60_000);
    const lanes = Array.from({ length: 400 }, (_, i) => `t${i}`);
    const oldJobs = lanes.map((lane) => jobRecord(old(), { lane }));
    await enqueue(ctx, oldJobs);
    await enqueue(
      ctx,
      lanes.map((lane) => jobRecord(mint(), { lane })),
    );
    const removed: string[] = [];
    const claimed: string[] = [];
    let cursor = WALK_START;
    // The first walk only (a cursor of walk 2 begins with w2:): it alone must not skip a lane.
    for (let call = 0; cursor !== '' && !cursor.startsWith('w2:'); call++) {
      const chunk = await cleanChunk(ctx, { state: 'pending', olderThanMs: 30_000, limit: 500, cursor });
      removed.push(...chunk.ids);
      cursor = chunk.cursor;
      if (call === 0) expect(cursor).not.toBe('');
      // Workers claim between the calls: they serve the front of ready:0, which the walk passed.
      const { jobs } = await claimJobs(ctx, { count: 20, leaseMs: 30_000, claimantPrefix: `walk${call}` });
      claimed.push(...jobs.map((job) => job.id));
    }
    const oldIdsLeft = new Set(oldJobs.map((job) => job.id));
    for (const id of [...removed, ...claimed]) oldIdsLeft.delete(id);
    expect([...oldIdsLeft]).toEqual([]);
    await expectFlowConsistent(redis, ctx.keys);
  });

  it('stops within a held page of many lanes at many levels, and resumes there skipping no set', async () => {
    // Up to 500 paused lanes × 10 levels: held fits a listpack, whose HSCAN returns all of it at
    // once (fewer lanes when the server's listpack limit is lower; 100 still give 1,000 sets).
    const ctx = scriptContext(redis, uniqueQueue('walk-held'));
    const old = oldIds(59, 3_600_000);
    const count = await listpackLanes(redis, 500, 100);
    const lanes = Array.from({ length: count }, (_, i) => `t${i}`);
    const oldJobs: string[] = [];
    const records = lanes.flatMap((lane) =>
      Array.from({ length: 10 }, (_, priority) => {
        // One set in ten holds an old job (level 9), the rest new ones.
        const id = priority === 9 ? old() : mint();
        if (priority === 9) oldJobs.push(id);
        return jobRecord(id, { lane, priority });
      }),
    );
    await enqueue(ctx, records);
    await pauseAll(ctx, lanes);
    expect(await redis.object('ENCODING', ctx.keys.held)).toBe('listpack');

    // Nothing an hour old: every call visits its 200 sets and stops inside the page.
    const first = await cleanChunk(ctx, {
      state: 'pending',
      olderThanMs: 7_200_000,
      limit: 500,
      cursor: 'p',
    });
    expect(first.ids).toEqual([]);
    expect(first.cursor).toMatch(/^w1:0:\d+:h0:\d:t\d+$/);

    let calls = 0;
    const counted = beforeEachCall(ctx, 'emqClean', () => {
      calls++;
    });
    const ids = await cleanJobs(counted, 'pending', { olderThanMs: 60_000, limit: 100_000 }, repeat);
    expect([...ids].sort()).toEqual([...oldJobs].sort());
    // 10 sets a lane at most 200 a call, then one more walk (the first removed jobs) over the 9 left.
    expect(calls).toBeGreaterThanOrEqual(Math.ceil((count * 10 + count * 9) / 200));
    expect(await expectEveryRowInOneSet(redis, ctx.keys)).toHaveLength(count * 9);
    await expectFlowConsistent(redis, ctx.keys);
  });
});
