import {
  claimJobs,
  completeJobs,
  enqueueJobs,
  extendLeases,
  type ClaimedJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { expectConsistent, jobRecord } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

/**
 * The claim keeps an active set of more than 16 jobs in Redis's skiplist encoding (a listpack
 * insert scans the whole set), by adding and removing a long member in the same script: what
 * readers see is only ever the claimed jobs.
 */
describe('drain: the active set once it grows past a few jobs', () => {
  let redis: Redis;
  const mint = idMinter(14);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function queueWith(count: number): Promise<ScriptContext> {
    const ctx = scriptContext(redis, uniqueQueue('drain-enc'));
    const ids = Array.from({ length: count }, () => mint());
    await enqueueJobs(
      ctx,
      ids.map((id) => jobRecord(id)),
      60_000,
    );
    return ctx;
  }

  const claim = (ctx: ScriptContext, count: number, claimantPrefix: string) =>
    claimJobs(ctx, { count, leaseMs: 30_000, claimantPrefix });
  const encoding = async (ctx: ScriptContext): Promise<string | null> =>
    (await redis.object('ENCODING', ctx.keys.active)) as string | null;
  const ids = (jobs: readonly ClaimedJobRecord[]): string[] => jobs.map((job) => job.id).sort();

  it('stays a listpack while it holds 16 jobs or fewer', async () => {
    const ctx = await queueWith(16);
    await claim(ctx, 10, 'small.a');
    expect(await encoding(ctx)).toBe('listpack');
    await claim(ctx, 6, 'small.b');
    expect(await encoding(ctx)).toBe('listpack');
    expect(await redis.zcard(ctx.keys.active)).toBe(16);
  });

  it('becomes a skiplist holding exactly the claimed jobs, from one claim or from many', async () => {
    const ctx = await queueWith(120);
    const first = await claim(ctx, 50, 'big.a');
    expect(await encoding(ctx)).toBe('skiplist');
    const second = await claim(ctx, 10, 'big.b');
    const small = await queueWith(40);
    const grown: ClaimedJobRecord[] = [];
    for (let i = 0; i < 20; i++) grown.push(...(await claim(small, 2, `grow.${i}`)).jobs);

    expect(await redis.zrange(ctx.keys.active, 0, -1)).toEqual(ids([...first.jobs, ...second.jobs]));
    expect(await encoding(small)).toBe('skiplist');
    expect(await redis.zrange(small.keys.active, 0, -1)).toEqual(ids(grown));
    await expectConsistent(redis, ctx.keys);
    await expectConsistent(redis, small.keys);
  });

  it('keeps its scores, extends and completions as they were, and starts small again once emptied', async () => {
    const ctx = await queueWith(60);
    const batch = await claim(ctx, 40, 'life.a');
    const claims = batch.jobs.map(({ id, attempt, claimant }) => ({ id, attempt, claimant }));
    const scores = await redis.zrange(ctx.keys.active, 0, -1, 'WITHSCORES');
    expect(new Set(scores.filter((_, i) => i % 2 === 1))).toEqual(new Set([String(batch.leaseDeadline)]));

    const extended = await extendLeases(ctx, claims, 60_000, 'life.extend');
    expect(extended.held).toEqual(claims.map(() => true));
    const done = await completeJobs(
      ctx,
      batch.jobs.map((job) => ({ claim: job, result: '' })),
      0,
    );
    expect(done).toEqual(claims.map(() => true));
    expect(await redis.exists(ctx.keys.active)).toBe(0);

    await claim(ctx, 5, 'life.b');
    expect(await encoding(ctx)).toBe('listpack');
    await expectConsistent(redis, ctx.keys);
  });

  it('answers a repeated claim with the jobs of the first, the set unchanged', async () => {
    const ctx = await queueWith(60);
    const first = await claim(ctx, 30, 'again');
    const repeat = await claim(ctx, 30, 'again');
    expect(repeat.jobs).toEqual(first.jobs);
    expect(await redis.zrange(ctx.keys.active, 0, -1)).toEqual(ids(first.jobs));
    expect(await redis.zcard(ctx.keys.pending)).toBe(30);
  });
});
