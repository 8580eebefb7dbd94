import type { Logger } from '@nestjs/common';
import { RedisCommandRefusedError } from '../redis-errors';
import { releaseJobs, replayWindow, type ClaimBatch } from '../scripts';
import { repeatUntilKnown } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import type { DurableScriptContext } from './durable-context';
import { checkReplicatedUntil, type ReplicaCheck } from './durable-write';
import type { ReplicaWait } from './replica-confirmer';
import { monotonicMs } from '../monotonic';

export interface ClaimConfirmation {
  readonly queue: string;
  /** The claim's request id (its claimant prefix): its reply record names it. */
  readonly claimantPrefix: string;
  /**
   * Local time after which the claim is given up and its jobs are given back unstarted: no
   * confirmation is waited for past it, and one that arrives later is not used.
   */
  readonly giveUpAt: number;
  /** Local time when the jobs' leases end: the release is not repeated past it. */
  readonly leaseEnd: number;
  /**
   * Aborted at shutdown: the confirmation is no longer waited for, the jobs are given back at
   * once, and their release is repeated for one command deadline more at most.
   */
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
 * - confirmed by enough replicas before `giveUpAt`: the batch is run, with at least half its
 *   lease left. A confirmation that comes back later is not used: by the lease's end the
 *   reaper may have handed the jobs to another worker;
 * - not confirmed by `giveUpAt` (replicas down or behind), or at shutdown: the jobs are
 *   released unstarted (back to pending, their retry budget intact) and claimed again later;
 * - record not found on the master the confirmation reached: the claim was lost in a failover
 *   (its jobs are pending again there), or that connection reached another server than the
 *   claim did while the sentinels switch masters. The jobs are released all the same: on a
 *   master without the claim the release (token and claimant checked) changes nothing, and on
 *   one that has it the jobs go back unstarted instead of waiting out their leases in active,
 *   which would spend an attempt;
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
  const replyKey = ctx.keys.reply(claim.claimantPrefix);
  const bound = { untilMs: claim.giveUpAt, signal: claim.stopped };
  let acknowledged = 0;
  let why: string;
  let absent = false;
  let refusal: RedisCommandRefusedError | undefined;
  try {
    for (;;) {
      const check: ReplicaCheck = await checkReplicatedUntil(
        durability,
        replyKey,
        replayWindow(ctx),
        claim.giveUpAt,
        bound,
      );
      if (check.state === 'present') acknowledged = check.acknowledged;
      // Checked after the answer too: one that took until past the cut-off counts for nothing.
      if (claim.stopped.aborted) {
        why = 'the worker is stopping';
        break;
      }
      if (monotonicMs() >= claim.giveUpAt) {
        why = `only ${acknowledged} of ${durability.replicas} replicas confirmed it within half its lease`;
        break;
      }
      if (check.state === 'present' && acknowledged >= durability.replicas) return batch;
      if (check.state === 'absent') {
        absent = true;
        why = 'the claim was not found on the master its confirmation reached';
        break;
      }
      if (check.state === 'unknown') {
        why = `its confirmation could not be made (${check.reason})`;
        break;
      }
      // Too few replicas within a WAIT shorter than the cut-off: that WAIT waited, ask again.
    }
  } catch (error) {
    if (error instanceof RedisCommandRefusedError) {
      refusal = error;
      why = `Redis refused ${refusal.command}`;
    } else {
      why = `its confirmation failed: ${(error as Error).message}`;
    }
  }
  await giveBack(ctx, durability, batch, claim, why, absent);
  // The claim loop logs it and waits before its next claim.
  if (refusal) throw refusal;
  return { ...batch, jobs: [] };
}

/**
 * Releases the batch unstarted (see releaseJobs), repeated while its outcome is unknown until
 * the jobs' leases end, or one command deadline past a stop of the worker (a shutdown is
 * bounded). Logs what came of it; never throws: unreleased jobs come back when their leases end.
 */
async function giveBack(
  ctx: DurableScriptContext,
  durability: ReplicaWait,
  batch: ClaimBatch,
  claim: ClaimConfirmation,
  why: string,
  absent: boolean,
): Promise<void> {
  const claims = batch.jobs.map(({ id, attempt, claimant }) => ({ id, attempt, claimant }));
  const requestId = newRequestId();
  // Until the leases end, or one command deadline past a stop: a shutdown waits for no more.
  let repeatEnd = Infinity;
  const onStop = (): void => void (repeatEnd = monotonicMs() + durability.commandTimeoutMs);
  if (claim.stopped.aborted) onStop();
  else claim.stopped.addEventListener('abort', onStop, { once: true });
  try {
    const flags = await repeatUntilKnown(() => releaseJobs(ctx, claims, requestId), {
      untilMs: claim.leaseEnd,
      stopped: () => monotonicMs() >= repeatEnd,
    });
    const released = flags.filter(Boolean).length;
    if (absent && released === 0) {
      claim.logger.warn(
        `A claim of ${claims.length} job(s) of ${claim.queue} is not on the master (lost in a failover ` +
          'before a replica had it); none of them was started',
      );
      return;
    }
    claim.logger.warn(
      `Released ${released} of ${claims.length} claimed job(s) of ${claim.queue} unstarted (${why}); ` +
        'they will be claimed again',
    );
  } catch (error) {
    claim.logger.warn(
      `Could not release ${claims.length} unstarted job(s) of ${claim.queue} (${why}; ${(error as Error).message}): ` +
        'the reaper returns them when their leases expire',
    );
  } finally {
    claim.stopped.removeEventListener('abort', onStop);
  }
}
