import {
  InvalidArgumentError,
  InvalidJobIdError,
  JobExistsError,
  enqueueJobs,
  type ScriptContext,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { events, expectConsistent, jobRecord, metrics, serverNowMs, snapshot } from '../support/assertions';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';

describe('enqueue: (new) -> pending | schedule', () => {
  let redis: Redis;
  const mint = idMinter(11);
  const TTL = 60_000;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  function context(): ScriptContext {
    return scriptContext(redis, uniqueQueue('enq'));
  }

  /** Everything enqueue can write: the sets, the rows, the counters, the events, the wake list. */
  async function everything(ctx: ScriptContext) {
    return {
      snap: await snapshot(redis, ctx.keys),
      metrics: await metrics(redis, ctx.keys),
      events: await events(redis, ctx.keys),
      wake: await redis.llen(ctx.keys.wake),
      idem: await redis.keys(`${ctx.keys.idempotencyPrefix}*`),
    };
  }

  it('writes the row and puts the id in pending with score 0, counts it and emits the event', async () => {
    const ctx = context();
    const id = mint();
    const outcome = await enqueueJobs(
      ctx,
      [jobRecord(id, { data: '{"to":"x"}', name: 'welcome', maxAttempts: 4 })],
      TTL,
    );
    expect(outcome).toEqual([{ id, created: true }]);
    const snap = await expectConsistent(redis, ctx.keys);
    expect(snap.sets.pending).toEqual({ [id]: 0 });
    expect(snap.sets.active).toEqual({});
    expect(snap.sets.schedule).toEqual({});
    expect(snap.sets.dead).toEqual({});
    expect(snap.rows[id]).toEqual({ d: '{"to":"x"}', n: 'welcome', m: '4' });
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 1 });
    expect((await events(redis, ctx.keys)).map((e) => e.fields)).toEqual([{ type: 'enqueued', ids: id }]);
    expect(await redis.lrange(ctx.keys.wake, 0, -1)).toEqual(['1']);
  });

  it('leaves the name field out when the job has no name', async () => {
    const ctx = context();
    const id = mint();
    await enqueueJobs(ctx, [jobRecord(id)], TTL);
    expect(await redis.hgetall(ctx.keys.job(id))).toEqual({ d: '{}', m: '3' });
  });

  it("writes a budget and a backoff only when the job has its own (else the serving worker's apply)", async () => {
    const ctx = context();
    const [none, own] = [mint(), mint()];
    const backoff = '{"type":"exponential","delayMs":100,"jitter":0}';
    await enqueueJobs(ctx, [jobRecord(none, { maxAttempts: undefined }), jobRecord(own, { backoff })], TTL);
    expect(await redis.hgetall(ctx.keys.job(none))).toEqual({ d: '{}' });
    expect(await redis.hgetall(ctx.keys.job(own))).toEqual({ d: '{}', m: '3', o: backoff });
  });

  it('refuses a backoff a row cannot hold, before writing any job of the call', async () => {
    const ctx = context();
    const before = await everything(ctx);
    for (const backoff of [
      '{"type":"custom"}',
      'not json',
      '[]',
      `{"type":"fixed","x":"${'x'.repeat(300)}"}`,
    ]) {
      const records = [jobRecord(mint()), jobRecord(mint(), { backoff })];
      await expect(enqueueJobs(ctx, records, TTL)).rejects.toThrow(InvalidArgumentError);
    }
    expect(await everything(ctx)).toEqual(before);
  });

  it('enqueues a batch in one call, in mint order in pending, one event and one wake token', async () => {
    const ctx = context();
    const ids = [mint(), mint(), mint(), mint()];
    const shuffled = [ids[2], ids[0], ids[3], ids[1]];
    const outcome = await enqueueJobs(
      ctx,
      shuffled.map((id) => jobRecord(id)),
      TTL,
    );
    expect(outcome).toEqual(shuffled.map((id) => ({ id, created: true })));
    expect(await redis.zrange(ctx.keys.pending, 0, -1)).toEqual(ids);
    expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 4 });
    expect((await events(redis, ctx.keys)).map((e) => e.fields)).toEqual([
      { type: 'enqueued', ids: shuffled.join(',') },
    ]);
    expect(await redis.llen(ctx.keys.wake)).toBe(1);
    await expectConsistent(redis, ctx.keys);
  });

  it('does nothing and sends nothing for an empty batch', async () => {
    const ctx = context();
    expect(await enqueueJobs(ctx, [], TTL)).toEqual([]);
    expect(await redis.exists(ctx.keys.metrics, ctx.keys.events, ctx.keys.wake)).toBe(0);
  });

  it('caps the event stream near its configured length', async () => {
    const ctx = scriptContext(redis, uniqueQueue('enq'), 10);
    await Promise.all(Array.from({ length: 300 }, () => enqueueJobs(ctx, [jobRecord(mint())], TTL)));
    expect(await redis.zcard(ctx.keys.pending)).toBe(300);
    // MAXLEN ~ trims whole stream nodes (100 entries by default), so the cap is approximate.
    expect(await redis.xlen(ctx.keys.events)).toBeLessThanOrEqual(110);
  });

  describe('delayed jobs', () => {
    it('delayMs puts the job in schedule at server now + delay', async () => {
      const ctx = context();
      const id = mint();
      const before = await serverNowMs(redis);
      await enqueueJobs(ctx, [jobRecord(id, { delayMs: 30_000 })], TTL);
      const after = await serverNowMs(redis);
      const snap = await expectConsistent(redis, ctx.keys);
      expect(snap.sets.pending).toEqual({});
      const score = snap.sets.schedule[id];
      expect(score).toBeGreaterThanOrEqual(before + 30_000);
      expect(score).toBeLessThanOrEqual(after + 30_000);
      expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 1 });
      // A delayed job wakes workers too, so a blocked worker can shorten its wait.
      expect(await redis.llen(ctx.keys.wake)).toBe(1);
    });

    it('runAtMs in the future puts the job in schedule at exactly that instant', async () => {
      const ctx = context();
      const id = mint();
      const runAt = (await serverNowMs(redis)) + 3_600_000;
      await enqueueJobs(ctx, [jobRecord(id, { runAtMs: runAt })], TTL);
      expect(await redis.zscore(ctx.keys.schedule, id)).toBe(String(runAt));
      expect(await redis.zscore(ctx.keys.pending, id)).toBeNull();
    });

    it('runAtMs wins over delayMs, in the future and in the past', async () => {
      const ctx = context();
      const later = mint();
      const past = mint();
      const now = await serverNowMs(redis);
      await enqueueJobs(
        ctx,
        [
          jobRecord(later, { runAtMs: now + 7_200_000, delayMs: 1_000 }),
          jobRecord(past, { runAtMs: now - 60_000, delayMs: 3_600_000 }),
        ],
        TTL,
      );
      const snap = await expectConsistent(redis, ctx.keys);
      expect(snap.sets.schedule).toEqual({ [later]: now + 7_200_000 });
      expect(snap.sets.pending).toEqual({ [past]: 0 });
    });

    it('a run-at already passed goes straight to pending', async () => {
      const ctx = context();
      const id = mint();
      await enqueueJobs(ctx, [jobRecord(id, { runAtMs: 1 })], TTL);
      expect(await redis.zscore(ctx.keys.pending, id)).toBe('0');
      expect(await redis.zcard(ctx.keys.schedule)).toBe(0);
    });
  });

  describe('idempotency keys', () => {
    it('a second enqueue with the same key returns the existing id and writes no new row', async () => {
      const ctx = context();
      const first = mint();
      const second = mint();
      expect(await enqueueJobs(ctx, [jobRecord(first, { idempotencyKey: 'order-1' })], TTL)).toEqual([
        { id: first, created: true },
      ]);
      expect(await redis.get(ctx.keys.idempotency('order-1'))).toBe(first);
      const pttl = await redis.pttl(ctx.keys.idempotency('order-1'));
      expect(pttl).toBeGreaterThan(TTL - 5_000);
      expect(pttl).toBeLessThanOrEqual(TTL);
      expect(await redis.hget(ctx.keys.job(first), 'k')).toBe('order-1');

      const before = await everything(ctx);
      expect(
        await enqueueJobs(ctx, [jobRecord(second, { idempotencyKey: 'order-1', data: '"other"' })], TTL),
      ).toEqual([{ id: first, created: false }]);
      const after = await everything(ctx);
      expect(after.snap).toEqual(before.snap);
      expect(after.metrics).toEqual({ enqueued: 1 });
      expect(after.events).toHaveLength(1);
      expect(await redis.exists(ctx.keys.job(second))).toBe(0);
    });

    it('within one batch, a repeated key returns the first job of the batch', async () => {
      const ctx = context();
      const [a, b, c] = [mint(), mint(), mint()];
      const outcome = await enqueueJobs(
        ctx,
        [jobRecord(a, { idempotencyKey: 'k' }), jobRecord(b, { idempotencyKey: 'k' }), jobRecord(c)],
        TTL,
      );
      expect(outcome).toEqual([
        { id: a, created: true },
        { id: a, created: false },
        { id: c, created: true },
      ]);
      const snap = await expectConsistent(redis, ctx.keys);
      expect(Object.keys(snap.sets.pending).sort()).toEqual([a, c]);
      expect(snap.rows[b]).toBeUndefined();
      expect(await metrics(redis, ctx.keys)).toEqual({ enqueued: 2 });
      expect((await events(redis, ctx.keys))[0].fields.ids).toBe(`${a},${c}`);
    });

    it('a matching key wins over an id that already exists', async () => {
      const ctx = context();
      const id = mint();
      await enqueueJobs(ctx, [jobRecord(id, { idempotencyKey: 'same' })], TTL);
      expect(await enqueueJobs(ctx, [jobRecord(id, { idempotencyKey: 'same' })], TTL)).toEqual([
        { id, created: false },
      ]);
    });
  });

  describe('all or nothing', () => {
    it('enqueue of an id that exists raises JobExistsError and writes nothing', async () => {
      const ctx = context();
      const id = mint();
      await enqueueJobs(ctx, [jobRecord(id, { data: '"original"' })], TTL);
      const before = await everything(ctx);
      await expect(
        enqueueJobs(ctx, [jobRecord(id, { data: '"replacement"', delayMs: 5_000 })], TTL),
      ).rejects.toEqual(new JobExistsError(id));
      const after = await everything(ctx);
      expect(after).toEqual(before);
      expect(after.snap.rows[id].d).toBe('"original"');
    });

    it('a batch whose last entry exists writes none of the entries before it', async () => {
      const ctx = context();
      const existing = mint();
      await enqueueJobs(ctx, [jobRecord(existing)], TTL);
      const before = await everything(ctx);
      const fresh = [mint(), mint()];
      const error = await enqueueJobs(
        ctx,
        [
          jobRecord(fresh[0], { idempotencyKey: 'fresh-key' }),
          jobRecord(fresh[1], { delayMs: 10_000 }),
          jobRecord(existing),
        ],
        TTL,
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(JobExistsError);
      expect((error as JobExistsError).id).toBe(existing);
      expect(await everything(ctx)).toEqual(before);
      expect(await redis.exists(ctx.keys.idempotency('fresh-key'))).toBe(0);
    });

    it('a batch that repeats an id is refused as a whole', async () => {
      const ctx = context();
      const [a, b] = [mint(), mint()];
      await expect(enqueueJobs(ctx, [jobRecord(a), jobRecord(b), jobRecord(a)], TTL)).rejects.toBeInstanceOf(
        JobExistsError,
      );
      const snap = await snapshot(redis, ctx.keys);
      expect(snap.rows).toEqual({});
      expect(snap.sets.pending).toEqual({});
      expect(await redis.exists(ctx.keys.metrics, ctx.keys.events)).toBe(0);
    });

    it('a batch with a malformed id or idempotency key is refused before anything is sent', async () => {
      const ctx = context();
      const good = mint();
      await expect(
        enqueueJobs(ctx, [jobRecord(good), jobRecord('JOB-not-an-id')], TTL),
      ).rejects.toBeInstanceOf(InvalidJobIdError);
      await expect(
        enqueueJobs(ctx, [jobRecord(good), jobRecord(mint(), { idempotencyKey: 'k'.repeat(300) })], TTL),
      ).rejects.toBeInstanceOf(InvalidArgumentError);
      expect(await redis.exists(ctx.keys.job(good), ctx.keys.pending, ctx.keys.metrics)).toBe(0);
    });
  });
});
