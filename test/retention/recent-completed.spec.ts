import type { Redis } from 'ioredis';
import {
  InvalidArgumentError,
  RECENT_COMPLETED_PAGE,
  completeJobs,
  enqueueJobs,
  recentCompleted,
  type ClaimedJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import { jobRecord } from '../support/assertions';
import { claimSome } from '../support/claims';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

/** Recently completed jobs, newest first, read back from the capped event stream. */
describe('retention: recentCompleted from the event stream', () => {
  let redis: Redis;
  const mint = idMinter(29);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function claimed(ctx: ScriptContext, count: number): Promise<ClaimedJobRecord[]> {
    const ids = Array.from({ length: count }, () => mint());
    await enqueueJobs(
      ctx,
      ids.map((id) => jobRecord(id)),
      60_000,
    );
    return claimSome(ctx, count);
  }

  const complete = (
    ctx: ScriptContext,
    jobs: ClaimedJobRecord[],
    result: (job: ClaimedJobRecord) => string = () => '',
  ) =>
    completeJobs(
      ctx,
      jobs.map((job) => ({ claim: job, result: result(job) })),
      0,
    );

  it('lists completions newest first across entries and within a batch, with small results', async () => {
    const ctx = scriptContext(redis, uniqueQueue('recent'));
    const jobs = await claimed(ctx, 4);
    await complete(ctx, [jobs[0]], () => JSON.stringify({ n: 0 }));
    await complete(ctx, jobs.slice(1, 3), (job) => JSON.stringify(job.id)); // one entry, two ids
    await complete(ctx, [jobs[3]]);
    const recent = await recentCompleted(ctx);
    expect(recent.map((entry) => entry.id)).toEqual([jobs[3].id, jobs[2].id, jobs[1].id, jobs[0].id]);
    expect(recent.map((entry) => entry.result)).toEqual([undefined, jobs[2].id, jobs[1].id, { n: 0 }]);
    expect('result' in recent[0]).toBe(false);
    const times = recent.map((entry) => entry.completedAt.getTime());
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const [seconds] = await redis.time();
    expect(Math.abs(times[0] - Number(seconds) * 1000)).toBeLessThan(60_000); // the server's clock
  });

  it('leaves out a result too large for the event (it stays on the row while retained)', async () => {
    const ctx = scriptContext(redis, uniqueQueue('recent'));
    const [big] = await claimed(ctx, 1);
    await complete(ctx, [big], () => JSON.stringify('x'.repeat(2_000)));
    const [entry] = await recentCompleted(ctx);
    expect(entry.id).toBe(big.id);
    expect(entry.result).toBeUndefined();
  });

  it('stops at the limit, and pages through a stream longer than one page to its start', async () => {
    const ctx = scriptContext(redis, uniqueQueue('recent'), 100_000);
    // Each job costs three entries (enqueued, claimed, completed): more than a page in all.
    const done: string[] = [];
    for (let round = 0; round < 150; round++) {
      const [job] = await claimed(ctx, 1);
      await complete(ctx, [job]);
      done.unshift(job.id);
    }
    expect(await redis.xlen(ctx.keys.events)).toBeGreaterThan(2 * RECENT_COMPLETED_PAGE);
    expect((await recentCompleted(ctx, { limit: 1_000 })).map((entry) => entry.id)).toEqual(done);
    expect((await recentCompleted(ctx, { limit: 7 })).map((entry) => entry.id)).toEqual(done.slice(0, 7));
    expect(await recentCompleted(ctx)).toHaveLength(100);
  });

  it('reaches back only as far as the capped stream: older completions have left the window', async () => {
    const ctx = scriptContext(redis, uniqueQueue('recent'), 10);
    const old = await claimed(ctx, 1);
    await complete(ctx, old);
    // MAXLEN ~ trims whole stream nodes (100 entries by default), so push well past one.
    for (let round = 0; round < 120; round++) {
      const [job] = await claimed(ctx, 1);
      await complete(ctx, [job]);
    }
    const window = await recentCompleted(ctx, { limit: 1_000 });
    expect(window.length).toBeGreaterThan(0);
    expect(window.length).toBeLessThan(121);
    expect(window.map((entry) => entry.id)).not.toContain(old[0].id);
  });

  it('returns nothing for a queue without events', async () => {
    expect(await recentCompleted(scriptContext(redis, uniqueQueue('recent')))).toEqual([]);
  });

  it.each([0, 1_001, 1.5, Number.NaN])('refuses limit %p before sending anything', async (limit) => {
    const ctx = scriptContext(redis, uniqueQueue('recent'));
    const sent = jest.spyOn(ctx.redis, 'xrevrange');
    await expect(recentCompleted(ctx, { limit })).rejects.toThrow(InvalidArgumentError);
    expect(sent).not.toHaveBeenCalled();
    sent.mockRestore();
  });
});
