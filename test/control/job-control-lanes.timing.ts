import { pauseLane, type ScriptContext } from '@app/echomq/internal';
import { cleanJobs } from '@app/echomq/queue/job-control/clean-jobs';
import { drainQueue } from '@app/echomq/queue/job-control/drain-queue';
import { obliterateQueue } from '@app/echomq/queue/job-control/obliterate-queue';
import type { Redis } from 'ioredis';
import { jobRecord } from '../support/assertions';
import { connect, scriptContext, uniqueQueue } from '../support/redis';
import { enqueue, oldIds, queueKeysOf, repeat } from './support/control';
import { expectFlowConsistent } from '../lifecycle/support/flow';
import { listpackLanes } from './support/listpack';
import { callTimes, HARD_CAP_US, logSlowCalls, TYPICAL_US, type ScriptName } from './support/slowlog';

const LANES = 20_000;
/** Lanes paused before the call, so part of the walk goes through held. */
const PAUSED = 2_000;

/**
 * A timing suite (npm run test:timing, run alone by .ci/run after npm test): its bounds are
 * times, which a machine busy with the parallel suites would blur, so it runs on its own.
 *
 * "No call over about 10 ms", read from SLOWLOG (Redis's own measure of each command's run time):
 * the 99th percentile of calls under TYPICAL_US, the slowest under HARD_CAP_US. Other suites
 * share the server, so entries are kept only for the script measured on its queue's keys; the
 * config is set once for this file (two files setting and restoring it would race) and restored.
 */
let redis: Redis;
let saved: string[] = [];

beforeAll(async () => {
  redis = connect();
  saved = await logSlowCalls(redis);
});
afterAll(async () => {
  for (let i = 0; i < saved.length; i += 2) await redis.config('SET', saved[i], saved[i + 1]);
  await redis.quit();
});

/**
 * drain, clean (pending) and obliterate of a queue with one job in each of 20,000 lanes (a
 * tenth of them paused, so held): each call looks at a bounded number of lanes, so none takes
 * longer with many lanes than with few.
 */
describe('job control over 20,000 lanes: every call bounded', () => {
  const figures: Record<string, { calls: number; p99Us: number; slowestUs: number }> = {};

  afterAll(() => {
    // The measured figures, for the docs (no assertion on them but the bounds).
    console.log(`job control over ${LANES} lanes: ${JSON.stringify(figures)}`);
  });

  async function manyLanes(name: string): Promise<ScriptContext> {
    const ctx = scriptContext(redis, uniqueQueue(name));
    const old = oldIds(61, 3_600_000);
    await enqueue(
      ctx,
      Array.from({ length: LANES }, (_, i) => jobRecord(old(), { lane: `tenant-${i}` })),
    );
    for (let at = 0; at < PAUSED; at += 200) {
      await Promise.all(Array.from({ length: 200 }, (_, i) => pauseLane(ctx, `tenant-${at + i}`)));
    }
    return ctx;
  }

  async function measured(
    ctx: ScriptContext,
    script: ScriptName,
    run: (counted: ScriptContext) => Promise<unknown>,
  ): Promise<void> {
    const figure = await callTimes(redis, ctx, script, run);
    figures[script] = figure;
    expect(figure.p99Us).toBeLessThan(TYPICAL_US);
    expect(figure.slowestUs).toBeLessThan(HARD_CAP_US);
  }

  it('clean of every pending job', async () => {
    const ctx = await manyLanes('lanes-clean');
    await measured(ctx, 'emqClean', async (counted) => {
      const ids = await cleanJobs(counted, 'pending', { olderThanMs: 60_000, limit: 100_000 }, repeat);
      expect(ids).toHaveLength(LANES);
    });
    await expectFlowConsistent(redis, ctx.keys);
  }, 60_000);

  it('drain', async () => {
    const ctx = await manyLanes('lanes-drain');
    await measured(ctx, 'emqDrain', async (counted) => {
      expect(await drainQueue(counted, undefined, repeat)).toBe(LANES);
    });
    await expectFlowConsistent(redis, ctx.keys);
  }, 60_000);

  it('obliterate', async () => {
    const ctx = await manyLanes('lanes-oblit');
    await measured(ctx, 'emqObliterate', async (counted) => {
      expect(await obliterateQueue(counted, { force: true }, repeat)).toEqual({ removed: LANES });
    });
    // Left: the new events stream, and keys that expire by themselves (replay records).
    const lasting: string[] = [];
    for (const key of await queueKeysOf(redis, ctx.keys.queue)) {
      if ((await redis.pttl(key)) < 0) lasting.push(key);
    }
    expect(lasting).toEqual([ctx.keys.events]);
  }, 60_000);
});

/**
 * Held lanes at many levels: 500 paused lanes × 10 levels (fewer lanes under a lower
 * hash-max-listpack-entries), so held is one listpack whose HSCAN returns every lane at once and
 * each lane expands to 10 sets. A clean that finds nothing old visits all 5,000 sets; the cap holds inside the page, so it takes calls of 200 sets each.
 */
describe('job control over held lanes at every level: the cap holds inside an HSCAN page', () => {
  it('clean that finds nothing old', async () => {
    const ctx = scriptContext(redis, uniqueQueue('held-levels'));
    // Fewer lanes when the server's listpack limit is lower (100 × 10 levels is still 1,000 sets).
    const count = await listpackLanes(redis, 500, 100);
    const lanes = Array.from({ length: count }, (_, i) => `tenant-${i}`);
    const mint = oldIds(62, 0);
    await enqueue(
      ctx,
      lanes.flatMap((lane) =>
        Array.from({ length: 10 }, (_, priority) => jobRecord(mint(), { lane, priority })),
      ),
    );
    for (let at = 0; at < lanes.length; at += 100) {
      await Promise.all(lanes.slice(at, at + 100).map((lane) => pauseLane(ctx, lane)));
    }
    expect(await redis.object('ENCODING', ctx.keys.held)).toBe('listpack');
    const figure = await callTimes(redis, ctx, 'emqClean', async (counted) => {
      expect(await cleanJobs(counted, 'pending', { olderThanMs: 3_600_000, limit: 100_000 }, repeat)).toEqual(
        [],
      );
    });
    console.log(`clean over ${count} held lanes x 10 levels: ${JSON.stringify(figure)}`);
    expect(figure.calls).toBeGreaterThanOrEqual((count * 10) / 200);
    expect(figure.p99Us).toBeLessThan(TYPICAL_US);
    expect(figure.slowestUs).toBeLessThan(HARD_CAP_US);
    await expectFlowConsistent(redis, ctx.keys);
  }, 60_000);
});
