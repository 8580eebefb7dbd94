import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  claimJobs,
  enqueueJobs,
  type ClaimedJobRecord,
  type NewJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import { scriptContext, uniqueQueue } from './redis';

/** Claims up to `count` jobs under a claimant prefix unique to this call; throws when none was there. */
export async function claimSome(
  ctx: ScriptContext,
  count = 1,
  leaseMs = 30_000,
): Promise<ClaimedJobRecord[]> {
  const { jobs } = await claimJobs(ctx, {
    count,
    leaseMs,
    claimantPrefix: `w${randomBytes(4).toString('hex')}`,
  });
  if (jobs.length === 0) throw new Error('nothing to claim');
  return jobs;
}

/** A fresh queue with these jobs enqueued and then claimed, in mint order. */
export async function enqueueAndClaim(
  redis: Redis,
  queuePrefix: string,
  records: readonly NewJobRecord[],
  leaseMs = 30_000,
): Promise<{ ctx: ScriptContext; jobs: ClaimedJobRecord[] }> {
  const ctx = scriptContext(redis, uniqueQueue(queuePrefix));
  await enqueueJobs(ctx, records, 60_000);
  return { ctx, jobs: await claimSome(ctx, records.length, leaseMs) };
}
