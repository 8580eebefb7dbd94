import {
  InvalidArgumentError,
  JobNotFoundError,
  JobStateError,
  PayloadTooLargeError,
  readJobView,
  toJobView,
  updateJob,
  type ScriptContext,
} from '@app/echomq/internal';
import { buildJobUpdate, type JobPatch } from '@app/echomq/queue/job-control/update-patch';
import type { Redis } from 'ioredis';
import { events, jobRecord, metrics, serverNowMs } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { claimUpTo, expectFlowConsistent } from '../lifecycle/support/flow';
import { deadJobs, dumpQueue, enqueue, expectEveryRowInOneSet } from './support/control';

describe('update job: data, run-at, lane and priority of a job that is not active', () => {
  let redis: Redis;
  const mint = idMinter(49);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  const context = (): ScriptContext => scriptContext(redis, uniqueQueue('update'));
  const update = async (ctx: ScriptContext, id: string, patch: JobPatch, requestId?: string) =>
    updateJob(ctx, id, await buildJobUpdate(ctx.keys.queue, patch, 1_000_000, undefined), requestId);
  const dataOf = async (ctx: ScriptContext, id: string) =>
    toJobView(ctx.keys.queue, id as never, await readJobView(ctx, id))?.data;

  it('rewrites the data, chunked or whole, leaving no chunk of the old payload', async () => {
    const ctx = context();
    const big = 'x'.repeat(1_000);
    const [id] = await enqueue(ctx, [jobRecord(mint(), { data: JSON.stringify({ big }) })]);
    expect(await update(ctx, id, { data: { small: 1 } })).toBe('pending');
    expect(await dataOf(ctx, id)).toEqual({ small: 1 });
    const fields = Object.keys(await redis.hgetall(ctx.keys.job(id)));
    expect(fields.filter((f) => /^d/.test(f))).toEqual(['d']);
    await update(ctx, id, { data: { big: 'y'.repeat(300) } });
    expect(await dataOf(ctx, id)).toEqual({ big: 'y'.repeat(300) });
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({
      type: 'updated',
      ids: id,
      state: 'pending',
      fields: 'data',
    });
    expect((await metrics(redis, ctx.keys)).updated).toBe(2);
  });

  it('moves a pending job to schedule for a later run-at, and back to pending for now', async () => {
    const ctx = context();
    const [id] = await enqueue(ctx, [jobRecord(mint(), { lane: 'vip', priority: 3 })]);
    const runAt = (await serverNowMs(redis)) + 3_600_000;
    expect(await update(ctx, id, { runAt: new Date(runAt) })).toBe('schedule');
    expect(Number(await redis.zscore(ctx.keys.schedule, id))).toBe(runAt);
    await expectFlowConsistent(redis, ctx.keys);
    expect(await update(ctx, id, { delayMs: 7_200_000 })).toBe('schedule');
    expect(Number(await redis.zscore(ctx.keys.schedule, id))).toBeGreaterThan(runAt);
    expect(await update(ctx, id, { delayMs: 0 })).toBe('pending');
    expect(await redis.zrange(ctx.keys.pendingOf('vip', 3), 0, -1)).toEqual([id]);
    await expectFlowConsistent(redis, ctx.keys);
    await expectEveryRowInOneSet(redis, ctx.keys);
  });

  it('moves a pending job between lanes and levels, keeping the flow indexes right', async () => {
    const ctx = context();
    const [id, other] = await enqueue(ctx, [
      jobRecord(mint(), { lane: 'a' }),
      jobRecord(mint(), { lane: 'a' }),
    ]);
    expect(await update(ctx, id, { lane: 'b', priority: 7 })).toBe('pending');
    expect(await redis.zrange(ctx.keys.pendingOf('b', 7), 0, -1)).toEqual([id]);
    expect(await redis.hmget(ctx.keys.job(id), 'l', 'y')).toEqual(['b', '7']);
    await expectFlowConsistent(redis, ctx.keys);
    // The last job of a lane leaves: the lane leaves ready at that level.
    await update(ctx, other, { lane: 'default', priority: 0 });
    expect(await redis.hmget(ctx.keys.job(other), 'l', 'y')).toEqual([null, null]);
    expect(await redis.zrange(ctx.keys.pending, 0, -1)).toEqual([other]);
    const flow = await expectFlowConsistent(redis, ctx.keys);
    expect(flow.ready[0]?.a).toBeUndefined();
    expect((await events(redis, ctx.keys)).at(-1)?.fields.fields).toBe('lane');
  });

  it('rewrites only the row of a scheduled or dead job for a lane or priority', async () => {
    const ctx = context();
    const [scheduled] = await enqueue(ctx, [jobRecord(mint(), { delayMs: 60_000 })]);
    const [dead] = await deadJobs(ctx, [mint()]);
    expect(await update(ctx, scheduled, { lane: 'vip', priority: 2 })).toBe('schedule');
    expect(await update(ctx, dead, { lane: 'vip' })).toBe('dead');
    expect(await redis.hmget(ctx.keys.job(scheduled), 'l', 'y')).toEqual(['vip', '2']);
    expect(await redis.hget(ctx.keys.job(dead), 'l')).toBe('vip');
    expect(await redis.zrange(ctx.keys.dead, 0, -1)).toEqual([dead]);
    await expectFlowConsistent(redis, ctx.keys);
    await expectEveryRowInOneSet(redis, ctx.keys);
  });

  it('answers a repeated request with its first state, changing nothing more', async () => {
    const ctx = context();
    const [id] = await enqueue(ctx, [jobRecord(mint())]);
    expect(await update(ctx, id, { delayMs: 60_000 }, 'update-1')).toBe('schedule');
    const before = await dumpQueue(redis, ctx.keys.queue);
    expect(await update(ctx, id, { delayMs: 60_000 }, 'update-1')).toBe('schedule');
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
  });

  it('refuses an active, finished or missing job, and a run-at for a dead one, writing nothing', async () => {
    const ctx = context();
    await enqueue(ctx, [jobRecord(mint())]);
    const [active] = await claimUpTo(ctx, 1);
    const [dead] = await deadJobs(ctx, [mint()]);
    const finished = mint();
    await redis.hset(ctx.keys.job(finished), 'd', '1', 'f', '1');
    const before = await dumpQueue(redis, ctx.keys.queue);
    await expect(update(ctx, active.id, { data: 1 })).rejects.toThrow(/it is active/);
    await expect(update(ctx, finished, { data: 1 })).rejects.toThrow(/it finished/);
    await expect(update(ctx, dead, { runAt: Date.now() })).rejects.toBeInstanceOf(JobStateError);
    await expect(update(ctx, mint(), { data: 1 })).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
  });

  it("refuses a run-at for a schedule's occurrence (its schedule times it), writing nothing", async () => {
    const ctx = context();
    const [occurrence] = await enqueue(ctx, [jobRecord(mint(), { delayMs: 60_000 })]);
    // As the schedule scripts write an occurrence: its row names the schedule key.
    await redis.hset(ctx.keys.job(occurrence), 'sk', 'nightly');
    const before = await dumpQueue(redis, ctx.keys.queue);
    await expect(update(ctx, occurrence, { delayMs: 0 })).rejects.toThrow(/occurrence of a schedule/);
    await expect(update(ctx, occurrence, { runAt: Date.now() + 1_000 })).rejects.toBeInstanceOf(
      JobStateError,
    );
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
    // Its data, lane and priority may still change.
    expect(await update(ctx, occurrence, { data: { v: 2 }, priority: 3 })).toBe('schedule');
  });

  it.each([
    [{}, InvalidArgumentError],
    [{ data: undefined }, InvalidArgumentError],
    [{ name: 'x' }, InvalidArgumentError],
    [{ lane: 'no spaces' }, InvalidArgumentError],
    [{ priority: 10 }, InvalidArgumentError],
    [{ delayMs: -1 }, InvalidArgumentError],
    [{ runAt: new Date('nope') }, InvalidArgumentError],
    [{ data: 'z'.repeat(2_000_000) }, PayloadTooLargeError],
    [{ data: 10n }, InvalidArgumentError],
  ])('refuses %p before anything is sent', async (patch, type) => {
    await expect(buildJobUpdate('q', patch as JobPatch, 1_000_000, undefined)).rejects.toBeInstanceOf(type);
  });
});
