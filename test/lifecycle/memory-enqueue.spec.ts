/**
 * The enqueue script's lean path: a job with nothing but its payload is written without an
 * HSET list (put_row_data), every job's settings share one reused list, and a merged call's
 * groups share one plan that a refused group gives back. These check that the lean path writes
 * exactly what the general one does, and that a call of ENQUEUE_MANY_MAX is one script call.
 */
import {
  claimJobs,
  ENQUEUE_MANY_MAX,
  enqueueGroups,
  enqueueJobs,
  InvalidArgumentError,
  JobExistsError,
  readJobView,
  type NewJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import { runScript } from '@app/echomq/scripts/run-script';
import type { Redis } from 'ioredis';
import { events, expectConsistent, jobRecord, snapshot } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

describe("enqueue's lean write path", () => {
  let redis: Redis;
  const mint = idMinter(23);
  const TTL = 60_000;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function context(): ScriptContext {
    return scriptContext(redis, uniqueQueue('lean'));
  }

  /** A job as enqueueMany builds it from `{ data }` alone: no setting of its own. */
  function bare(id: string, data = '{}'): NewJobRecord {
    return { id, data, name: '', delayMs: 0, runAtMs: 0, idempotencyKey: '' };
  }

  // Around one chunk, two chunks (the HSET without a list), more (the list), and whole values.
  it.each([0, 1, 63, 64, 100, 126, 127, 253, 6999, 7001])(
    'a %i-byte payload with no settings is its row alone, and reads back whole',
    async (size) => {
      const ctx = context();
      const data = 'xé'.repeat(size).slice(0, size);
      const id = mint();
      await enqueueJobs(ctx, [bare(id, data)], TTL);
      const fields = await redis.hgetall(ctx.keys.job(id));
      const chunks = Object.keys(fields).filter((field) => field !== 'dn');
      const bytes = Buffer.byteLength(data);
      const count = bytes <= 63 || bytes > 7000 ? 1 : Math.ceil(bytes / 63);
      expect(chunks).toEqual(['d', ...Array.from({ length: count - 1 }, (_, i) => `d${i + 2}`)]);
      expect(fields.dn).toBe(count > 4 ? String(count) : undefined);
      expect((await readJobView(ctx, id)).fields.d).toBe(data);
      const { jobs } = await claimJobs(ctx, { count: 1, leaseMs: 10_000, claimantPrefix: 'w' });
      expect(jobs[0].data).toBe(data);
    },
  );

  it('writes the same row for a job with settings as for one without, plus the settings', async () => {
    const ctx = context();
    const data = JSON.stringify({ pad: 'y'.repeat(300) });
    const [plain, own] = [mint(), mint()];
    await enqueueJobs(
      ctx,
      [bare(plain, data), jobRecord(own, { data, name: 'n', maxAttempts: 4, timeoutMs: 900, priority: 2 })],
      TTL,
    );
    const { n, m, t, y, ...payload } = await redis.hgetall(ctx.keys.job(own));
    expect({ n, m, t, y }).toEqual({ n: 'n', m: '4', t: '900', y: '2' });
    expect(payload).toEqual(await redis.hgetall(ctx.keys.job(plain)));
    expect(Object.keys(payload)).toEqual(['d', 'd2', 'd3', 'd4', 'd5', 'dn']);
  });

  it('puts a mixed call of lanes, levels and delays each in its own set, one event for all', async () => {
    const ctx = context();
    const ids = Array.from({ length: 8 }, () => mint());
    const jobs = [
      bare(ids[0]),
      jobRecord(ids[1], { lane: 'a' }),
      jobRecord(ids[2], { priority: 3 }),
      jobRecord(ids[3], { lane: 'a', priority: 3 }),
      { ...bare(ids[4]), delayMs: 60_000 },
      jobRecord(ids[5], { lane: 'a' }),
      bare(ids[6]),
      jobRecord(ids[7], { priority: 0, lane: 'default' }),
    ];
    await enqueueJobs(ctx, jobs, TTL);
    const members = async (key: string) => redis.zrange(key, 0, -1);
    expect(await members(ctx.keys.pending)).toEqual([ids[0], ids[6], ids[7]]);
    expect(await members(ctx.keys.pendingOf('a', 0))).toEqual([ids[1], ids[5]]);
    expect(await members(ctx.keys.pendingOf('default', 3))).toEqual([ids[2]]);
    expect(await members(ctx.keys.pendingOf('a', 3))).toEqual([ids[3]]);
    expect(await members(ctx.keys.schedule)).toEqual([ids[4]]);
    expect((await events(redis, ctx.keys)).map((e) => e.fields)).toEqual([
      { type: 'enqueued', ids: ids.join(',') },
    ]);
  });

  it('gives back what a refused group took: its ids and idempotency keys are free for the groups after it', async () => {
    const ctx = context();
    const existing = mint();
    await enqueueJobs(ctx, [bare(existing)], TTL);
    const [a, b, c, d, e] = [mint(), mint(), mint(), mint(), mint()];
    const keyed = (id: string, key: string) => ({ ...bare(id), idempotencyKey: key });
    const groups = [
      [keyed(a, 'k1'), bare(b), bare(existing)], // refused: its last id exists
      [keyed(c, 'k1'), bare(b)], // k1 and b are free again
      [bare(d), bare(d)], // refused: the same id twice
      [bare(d), keyed(e, 'k1')], // d is free again; k1 is bound to c by now
    ];
    const requestId = `lean-${existing}`;
    const outcomes = await enqueueGroups(ctx, groups, TTL, requestId);
    const expected = [
      new JobExistsError(existing),
      [
        { id: c, created: true },
        { id: b, created: true },
      ],
      new JobExistsError(d),
      [
        { id: d, created: true },
        { id: c, created: false },
      ],
    ];
    expect(outcomes).toEqual(expected);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(Object.keys(snap.sets.pending).sort()).toEqual([existing, b, c, d].sort());
    expect(await redis.get(`${ctx.keys.idempotencyPrefix}k1`)).toBe(c);
    // A repeat of the call (its reply lost) answers the same and writes nothing more.
    expect(await enqueueGroups(ctx, groups, TTL, requestId)).toEqual(expected);
    expect(await snapshot(redis, ctx.keys)).toEqual(snap);
  });

  it('takes ENQUEUE_MANY_MAX jobs in one script call and refuses one more there, having written nothing', async () => {
    const ctx = context();
    const all = Array.from({ length: ENQUEUE_MANY_MAX }, () => bare(mint()));
    const outcomes = await enqueueJobs(ctx, all, TTL);
    expect(outcomes.every((outcome) => outcome.created)).toBe(true);
    expect(await redis.zcard(ctx.keys.pending)).toBe(ENQUEUE_MANY_MAX);
    expect(await redis.xlen(ctx.keys.events)).toBe(1);

    // Straight to the script, past the wrapper's own check: the script's bound holds alone,
    // for one group of ENQUEUE_MANY_MAX + 1 and for two groups that together are one too many.
    for (const sizes of [[ENQUEUE_MANY_MAX + 1], [600, ENQUEUE_MANY_MAX - 599]]) {
      const other = context();
      const n = sizes[0] + (sizes[1] ?? 0);
      const perJob = Array.from({ length: n }, () => [mint(), '{}', '', '', 0, 0, '', '', '', '', '', '']);
      const k = other.keys;
      const call = runScript(
        other,
        'emqEnqueue',
        [k.fence, k.reply('lean-over'), k.pending, k.schedule, k.metrics, k.events, k.wake],
        [k.jobPrefix, k.idempotencyPrefix, 1000, TTL, TTL, sizes.length, ...sizes, ...perJob.flat()],
      );
      await expect(call).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await redis.keys(`${k.base}*`)).toEqual([]);
    }
  });
});
