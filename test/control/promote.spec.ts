import { JobNotFoundError, JobStateError, promoteJob, type ScriptContext } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { events, jobRecord, metrics } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { expectFlowConsistent } from '../lifecycle/support/flow';
import { deadJobs, dumpQueue, enqueue, expectEveryRowInOneSet } from './support/control';

describe('promote job: schedule -> pending now', () => {
  let redis: Redis;
  const mint = idMinter(48);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  const context = (): ScriptContext => scriptContext(redis, uniqueQueue('promote-job'));

  it('moves a job whose run-at is ahead into its own lane at its level, counts, emits, wakes', async () => {
    const ctx = context();
    const [id] = await enqueue(ctx, [jobRecord(mint(), { delayMs: 3_600_000, lane: 'vip', priority: 2 })]);
    await redis.del(ctx.keys.wake);
    await promoteJob(ctx, id);
    expect(await redis.zrange(ctx.keys.pendingOf('vip', 2), 0, -1)).toEqual([id]);
    expect(await redis.zcard(ctx.keys.schedule)).toBe(0);
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
    expect((await metrics(redis, ctx.keys)).promoted).toBe(1);
    expect((await events(redis, ctx.keys)).at(-1)?.fields).toEqual({ type: 'promoted', ids: id });
    await expectFlowConsistent(redis, ctx.keys);
    await expectEveryRowInOneSet(redis, ctx.keys);
  });

  it('succeeds again for a repeated request, changing nothing', async () => {
    const ctx = context();
    const [id] = await enqueue(ctx, [jobRecord(mint(), { delayMs: 60_000 })]);
    await promoteJob(ctx, id, 'promote-1');
    const before = await dumpQueue(redis, ctx.keys.queue);
    await promoteJob(ctx, id, 'promote-1');
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
  });

  it('refuses a job that is not scheduled (JobStateError) or does not exist (JobNotFoundError), writing nothing', async () => {
    const ctx = context();
    const [pending] = await enqueue(ctx, [jobRecord(mint())]);
    const [dead] = await deadJobs(ctx, [mint()]);
    const before = await dumpQueue(redis, ctx.keys.queue);
    await expect(promoteJob(ctx, pending)).rejects.toBeInstanceOf(JobStateError);
    await expect(promoteJob(ctx, dead)).rejects.toThrow(/is not scheduled/);
    await expect(promoteJob(ctx, mint())).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await dumpQueue(redis, ctx.keys.queue)).toEqual(before);
  });
});
