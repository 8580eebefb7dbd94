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

  async function claimAgain(ctx: ScriptContext, leaseMs = 30_000): Promise<ClaimedJobRecord> {
    const { jobs } = await claimJobs(ctx, { count: 1, leaseMs, claimantPrefix: `again-${mint()}` });
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

  it('a reaped lease replaces the error and drops the stack of the attempt before', async () => {
    const { ctx, jobs } = await enqueueAndClaim(redis, 'stack', [jobRecord(mint(), { maxAttempts: 5 })]);
    await failJob(ctx, jobs[0], failRequest({ type: 'fixed', delayMs: 0 }, jobs[0], new Error('first')));
    await claimAgain(ctx, 1);
    // The 1 ms lease has run out once the server clock moved past it.
    let reaped = 0;
    for (let tries = 0; reaped === 0 && tries < 200; tries++) reaped = (await reapExpired(ctx, 10)).toPending;
    expect(reaped).toBe(1);
    const after = await view(ctx, jobs[0].id);
    expect(after?.lastError).toMatch(/^lease expired during attempt 2$/);
    expect(after).not.toHaveProperty('lastErrorStack');
  });
});
