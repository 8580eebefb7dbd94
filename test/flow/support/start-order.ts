import { randomBytes } from 'node:crypto';
import { claimJobs, compareIds, type ClaimedJobRecord, type ScriptContext } from '@app/echomq/internal';

/** Leases long enough that nothing claimed by these tests is reaped while they read it. */
const LONG_LEASE_MS = 600_000;

/**
 * Claims one job per call, `calls` times (stopping early when nothing is claimable), and
 * returns the jobs in the order they started: what a worker with concurrency 1 sees, read
 * straight off the claim script, so the scheduler's choices are observed without a worker's
 * timing in between.
 */
export async function startOneByOne(ctx: ScriptContext, calls: number): Promise<ClaimedJobRecord[]> {
  const started: ClaimedJobRecord[] = [];
  const prefix = `t${randomBytes(4).toString('hex')}`;
  for (let call = 0; call < calls; call++) {
    const { jobs } = await claimJobs(ctx, {
      count: 1,
      leaseMs: LONG_LEASE_MS,
      claimantPrefix: `${prefix}-${call}`,
    });
    if (jobs.length === 0) break;
    started.push(...jobs);
  }
  return started;
}

/** Starts per lane (lane -> count). */
export function tallyByLane(jobs: readonly { readonly lane: string }[]): Record<string, number> {
  const tally: Record<string, number> = {};
  for (const job of jobs) tally[job.lane] = (tally[job.lane] ?? 0) + 1;
  return tally;
}

/** The ids of one lane's jobs, in the order they started. */
export function idsOfLane(jobs: readonly ClaimedJobRecord[], lane: string): string[] {
  return jobs.filter((job) => job.lane === lane).map((job) => job.id);
}

/** The same ids in mint order: equal to the input exactly when it was first in, first out. */
export function inMintOrder(ids: readonly string[]): string[] {
  return [...ids].sort(compareIds);
}
