import { extendLeases, type ClaimedJobRecord, type ScriptContext } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import {
  STALE_KINDS,
  events,
  expectConsistent,
  jobRecord,
  metrics,
  serverNowMs,
  staleScenario,
  untouchable,
} from '../support/assertions';
import { enqueueAndClaim } from '../support/claims';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

describe('extend: active -> active with a new deadline', () => {
  let redis: Redis;
  const mint = idMinter(15);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function claimed(count: number): Promise<{ ctx: ScriptContext; jobs: ClaimedJobRecord[] }> {
    const records = Array.from({ length: count }, () => jobRecord(mint()));
    return enqueueAndClaim(redis, 'extend', records, 5_000);
  }

  it('moves the lease deadline to server now + lease for every claim it still holds', async () => {
    const { ctx, jobs } = await claimed(2);
    const rowsBefore = (await expectConsistent(redis, ctx.keys)).rows;
    const before = await serverNowMs(redis);
    const outcome = await extendLeases(ctx, jobs, 90_000);
    const after = await serverNowMs(redis);

    expect(outcome.held).toEqual([true, true]);
    expect(outcome.leaseDeadline).toBeGreaterThanOrEqual(before + 90_000);
    expect(outcome.leaseDeadline).toBeLessThanOrEqual(after + 90_000);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.active).toEqual({
      [jobs[0].id]: outcome.leaseDeadline,
      [jobs[1].id]: outcome.leaseDeadline,
    });
    // The heartbeat touches the deadline only: token, claimant and the rest of the row stay.
    expect(snap.rows).toEqual(rowsBefore);
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 2, claimed: 2, extended: 2 });
    // Heartbeats leave no event: they would crowd completions out of the capped stream.
    expect((await events(redis, ctx.keys)).map((e) => e.fields.type)).not.toContain('extended');
  });

  it('rescues a lease whose deadline already passed, if the reaper has not taken it yet', async () => {
    const { ctx, jobs } = await claimed(1);
    const now = await serverNowMs(redis);
    await redis.zadd(ctx.keys.active, 'XX', now - 1_000, jobs[0].id);
    const outcome = await extendLeases(ctx, jobs, 20_000);
    expect(outcome.held).toEqual([true]);
    expect(Number(await redis.zscore(ctx.keys.active, jobs[0].id))).toBeGreaterThanOrEqual(now + 20_000);
  });

  it('in a mixed batch, extends what it holds and reports the rest lost, in order', async () => {
    const { ctx, jobs } = await claimed(3);
    const deadlineOfLost = Number(await redis.zscore(ctx.keys.active, jobs[1].id));
    const outcome = await extendLeases(ctx, [jobs[0], { ...jobs[1], claimant: 'thief.0' }, jobs[2]], 60_000);
    expect(outcome.held).toEqual([true, false, true]);
    expect(Number(await redis.zscore(ctx.keys.active, jobs[1].id))).toBe(deadlineOfLost);
    expect(Number(await redis.zscore(ctx.keys.active, jobs[0].id))).toBe(outcome.leaseDeadline);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ extended: 2, stale: 1 });
    expect((await events(redis, ctx.keys)).map((e) => e.fields.type)).not.toContain('extended');
  });

  describe('a stale claim changes nothing and reports the lease lost', () => {
    it.each(STALE_KINDS)('%s', async (kind) => {
      const ctx = scriptContext(redis, uniqueQueue('extend-stale'));
      const id = mint();
      const stale = await staleScenario(redis, ctx, id, kind);
      const before = await untouchable(redis, ctx.keys);
      const staleCount = (await metrics(redis, ctx.keys)).stale ?? 0;

      const outcome = await extendLeases(ctx, [stale], 600_000);
      expect(outcome.held).toEqual([false]);

      expect(await untouchable(redis, ctx.keys)).toEqual(before);
      expect((await metrics(redis, ctx.keys)).stale).toBe(staleCount + 1);
      expect((await metrics(redis, ctx.keys)).extended).toBeUndefined();
      await expectConsistent(redis, ctx.keys);
    });
  });
});
