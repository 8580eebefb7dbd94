import type { Logger } from '@nestjs/common';
import { RedisCommandRefusedError } from '../redis-errors';
import { releaseJobs, replayWindow, type ClaimBatch } from '../scripts';
import { repeatUntilKnown } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import type { DurableScriptContext } from './durable-context';
import { checkReplicatedUntil } from './durable-write';
import type { ReplicaWait } from './replica-confirmer';
import { monotonicMs } from '../monotonic';

export interface ClaimConfirmation {
  readonly queue: string;
  /** The claim's request id (its claimant prefix): its reply record names it. */
  readonly claimantPrefix: string;
  /** Local time after which the claim is given up and its jobs are given back unstarted. */
  readonly giveUpAt: number;
  /** Local time when the jobs' leases end: the release is not repeated past it. */
  readonly leaseEnd: number;
  /** Aborted at shutdown: the jobs are given back at once. */
  readonly stopped: AbortSignal;
  readonly logger: Logger;
}

/**
 * A claimed job starts only once its claim is on the replicas. The claim raised each job's
 * attempts (its fencing token); if the master failed before a replica had that, the promoted
 * replica would hand the same token to the next claimant while this holder runs it, and both
 * could complete the job under one token. So the claim is confirmed by its reply record
 * (checkReplicatedUntil) before any handler runs:
 *
 * - confirmed by enough replicas: the batch is run;
 * - record not on the master: the claim was lost in a failover and the jobs are back in pending
 *   there; none is started;
 * - not confirmed by `giveUpAt` (replicas down or behind) or at shutdown: the jobs are released
 *   unstarted (back to pending, their retry budget intact) and claimed again later;
 * - the confirmation refused for good (a Redis user without `+wait`): the jobs are released
 *   unstarted and the refusal is thrown, so the claim loop backs off as after any failed
 *   claim (up to 5 s between claims, each refusal logged) instead of claiming again at once.
 *
 * Resolves with the batch to run: all of it, or none of its jobs.
 */
export async function replicatedClaim(
  ctx: DurableScriptContext,
  durability: ReplicaWait,
  batch: ClaimBatch,
  claim: ClaimConfirmation,
): Promise<ClaimBatch> {
  const none: ClaimBatch = { ...batch, jobs: [] };
  const replyKey = ctx.keys.reply(claim.claimantPrefix);
  let acknowledged = 0;
  let refusal: RedisCommandRefusedError | undefined;
  try {
    for (;;) {
      const check = await checkReplicatedUntil(
        durability,
        replyKey,
        replayWindow(ctx),
        claim.giveUpAt,
        claim.stopped,
      );
      if (check.state === 'present' && check.acknowledged >= durability.replicas) return batch;
      if (check.state === 'absent') {
        claim.logger.warn(
          `A claim of ${batch.jobs.length} job(s) of ${claim.queue} is not on the master (lost in a failover ` +
            'before a replica had it); none of them was started',
        );
        return none;
      }
      if (check.state === 'present') acknowledged = check.acknowledged;
      // Each try's WAIT waited its timeout: no pause is needed before the next.
      if (monotonicMs() >= claim.giveUpAt || claim.stopped.aborted) break;
    }
  } catch (error) {
    if (error instanceof RedisCommandRefusedError) refusal = error;
    else
      claim.logger.warn(
        `Could not confirm a claim of ${claim.queue} with its replicas: ${(error as Error).message}`,
      );
  }
  const why = refusal
    ? `Redis refused ${refusal.command}`
    : claim.stopped.aborted
      ? 'the worker is stopping'
      : `only ${acknowledged} of ${durability.replicas} replicas confirmed it`;
  await giveBack(ctx, batch, claim, why);
  // The claim loop logs it and waits before its next claim.
  if (refusal) throw refusal;
  return none;
}

async function giveBack(
  ctx: DurableScriptContext,
  batch: ClaimBatch,
  claim: ClaimConfirmation,
  why: string,
): Promise<void> {
  const claims = batch.jobs.map(({ id, attempt, claimant }) => ({ id, attempt, claimant }));
  const requestId = newRequestId();
  try {
    await repeatUntilKnown(() => releaseJobs(ctx, claims, requestId), { untilMs: claim.leaseEnd });
    claim.logger.warn(
      `Released ${claims.length} claimed job(s) of ${claim.queue} unstarted (${why}); they will be claimed again`,
    );
  } catch (error) {
    claim.logger.warn(
      `Could not release ${claims.length} unstarted job(s) of ${claim.queue} (${why}; ${(error as Error).message}): ` +
        'the reaper returns them when their leases expire',
    );
  }
}
