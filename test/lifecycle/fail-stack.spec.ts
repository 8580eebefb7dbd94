import {
  claimJobs,
  failJob,
  readJobView,
  reapExpired,
  toJobView,
  type ClaimedJobRecord,
  type JobId,
  type ScriptContext,
} from '@app/echomq/internal';
import { ERROR_STACK_MAX, ERROR_TEXT_MAX } from '@app/echomq/scripts/limits';
import { failRequest } from '@app/echomq/worker/fail-request';
import type { Redis } from 'ioredis';
import { jobRecord } from '../support/assertions';
import { enqueueAndClaim } from '../support/claims';
import { connect, idMinter } from '../support/redis';

/** A failed attempt keeps its error's stack trace on the row, for the job's detail (dashboard, CLI, api). */
describe('fail: the stack trace of the error', () => {
  let redis: Redis;
  const mint = idMinter(15);

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  async function view(ctx: ScriptContext, id: string) {
    return toJobView(ctx.keys.queue, id as JobId, await readJobView(ctx, id));
  }

  async function claimAgain(ctx: ScriptContext): Promise<ClaimedJobRecord> {
    const { jobs } = await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: `again-${mint()}` });
    return jobs[0];
  }

  it('keeps the stack of an Error, and drops it when a later attempt fails without one', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'stack', [jobRecord(mint(), { maxAttempts: 5 })]);
    const thrown = new TypeError('cannot read the invoice');
    const request = failRequest({ type: 'fixed', delayMs: 0 }, jobs[0], thrown);
    expect(request.stack).toBe(thrown.stack);
    await failJob(ctx, jobs[0], request);

    const first = await view(ctx, jobs[0].id);
    expect(first?.lastError).toBe('TypeError: cannot read the invoice');
    expect(first?.lastErrorStack).toContain('TypeError: cannot read the invoice');
    expect(first?.lastErrorStack).toContain('fail-stack.spec.ts');

    // A thrown string has no stack: the row must not show the earlier attempt's.
    const second = await claimAgain(ctx);
    await failJob(ctx, second, failRequest({ type: 'fixed', delayMs: 0 }, second, 'plain text'));
    const after = await view(ctx, jobs[0].id);
    expect(after?.lastError).toBe('plain text');
    expect(after).not.toHaveProperty('lastErrorStack');
  });

  it('cuts a very long stack on the row', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'stack', [jobRecord(mint(), { maxAttempts: 5 })]);
    await failJob(ctx, jobs[0], {
      error: 'Error: deep',
      stack: 'x'.repeat(20_000),
      backoffMs: 0,
      unrecoverable: false,
    });
    expect((await view(ctx, jobs[0].id))?.lastErrorStack).toHaveLength(8_192);
  });

  it('cuts a long non-ASCII stack between characters, so the row keeps it whole and valid', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'stack', [jobRecord(mint(), { maxAttempts: 5 })]);
    let claim = jobs[0];
    for (const frame of ['    at étape (fichier-é.ts:1:1)\n', '    at 処理 (ファイル.ts:1:1) 😀\n']) {
      const thrown = new Error('échec');
      thrown.stack = `Error: échec\n${frame.repeat(1_000)}`;
      const request = failRequest({ type: 'fixed', delayMs: 0 }, claim, thrown);
      expect(Buffer.byteLength(request.stack!)).toBeLessThanOrEqual(ERROR_STACK_MAX);
      expect(Buffer.byteLength(request.stack!)).toBeGreaterThan(ERROR_STACK_MAX - 8);
      expect(request.stack).toMatch(/\.\.\.$/);
      expect(thrown.stack.startsWith(request.stack!.slice(0, -3))).toBe(true);
      await failJob(ctx, claim, request);
      // Read back byte for byte: the script cut nothing more (no half character, no U+FFFD).
      const raw = await redis.hgetBuffer(ctx.keys.job(claim.id), 'es');
      expect(raw?.equals(Buffer.from(request.stack!))).toBe(true);
      expect((await view(ctx, claim.id))?.lastErrorStack).toBe(request.stack);
      claim = await claimAgain(ctx);
    }
  });

  it('cuts a long non-ASCII error text between characters too', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'stack', [jobRecord(mint(), { maxAttempts: 5 })]);
    const request = failRequest({ type: 'fixed', delayMs: 0 }, jobs[0], 'é'.repeat(ERROR_TEXT_MAX));
    expect(Buffer.byteLength(request.error)).toBeLessThanOrEqual(ERROR_TEXT_MAX);
    expect(request.error).toBe(`${'é'.repeat((ERROR_TEXT_MAX - 3) >> 1)}...`);
    await failJob(ctx, jobs[0], request);
    expect((await view(ctx, jobs[0].id))?.lastError).toBe(request.error);
  });

  it('a reaped lease replaces the error and drops the stack of the attempt before', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'stack', [jobRecord(mint(), { maxAttempts: 5 })]);
    await failJob(ctx, jobs[0], failRequest({ type: 'fixed', delayMs: 0 }, jobs[0], new Error('first')));
    expect((await view(ctx, jobs[0].id))?.lastErrorStack).toContain('Error: first');
    await claimAgain(ctx);
    // Its lease deadline rewritten into the past: one reap takes it back.
    await redis.zadd(ctx.keys.active, 0, jobs[0].id);
    expect(await reapExpired(ctx, 10)).toMatchObject({ toPending: 1, toDead: 0 });
    const after = await view(ctx, jobs[0].id);
    expect(after?.lastError).toMatch(/^lease expired during attempt 2$/);
    expect(after).not.toHaveProperty('lastErrorStack');
  });
});
