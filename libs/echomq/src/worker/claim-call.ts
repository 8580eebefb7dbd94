import type { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { warnUnlessUnreachable } from '../connection/warn-unless-unreachable';
import { isTransientRedisError } from '../errors';
import type { DurableScriptContext } from '../durability/durable-context';
import { replicatedClaim } from '../durability/durable-claim';
import { claimJobs, type ClaimBatch, type ClaimRequest, type ScriptContext } from '../scripts';
import { newRequestId } from '../scripts/request-id';
import { monotonicMs } from '../monotonic';
import type { RuntimeObserver } from './runtime-observer';

const REPEAT_FIRST_MS = 50;
const REPEAT_MAX_MS = 2_000;

export interface ClaimCallOptions {
  readonly queue: string;
  /** How long after its first send the claim may still be repeated (ClaimLoopTiming.repeatForMs). */
  readonly repeatForMs: number;
  /** Aborted when the loop stops claiming: no repeat is sent after it. */
  readonly stopped: AbortSignal;
  readonly logger: Logger;
  /** Told of the claim once its jobs are handed over (metrics, tracing); not of a claim that failed. */
  readonly observer: Pick<RuntimeObserver, 'claimed'>;
}

export interface SentClaim {
  readonly batch: ClaimBatch;
  /** Local time of the first send: the earliest the claim can have run, where the jobs' leases start. */
  readonly sentAt: number;
}

/**
 * One claim, repeated while its outcome is unknown with the same claimant prefix (the
 * request id): if the lost call did claim jobs, the repeat hands exactly those to this loop,
 * instead of leaving them in active, held by nobody, until their leases run out. Gives up
 * (throws the last error) on a refusal, at the end of the replay window, or once stopped.
 * With durable writes, the jobs are handed over only once the claim is replicated (none of
 * them otherwise; see replicatedClaim). The observer hears the round trip, from the first send
 * until the jobs are handed over (repeats and the replicas' confirmation included).
 */
export async function claimWithRepeat(
  ctx: DurableScriptContext,
  request: Omit<ClaimRequest, 'claimantPrefix'>,
  options: ClaimCallOptions,
): Promise<SentClaim> {
  const sentAtEpochMs = Date.now();
  const sentAt = monotonicMs();
  const claim = await confirmedClaim(ctx, request, sentAt, options);
  const { jobs } = claim.batch;
  try {
    options.observer.claimed(options.queue, jobs, monotonicMs() - sentAt, sentAtEpochMs);
  } catch (error) {
    // Guarded here too, whatever the observer is: the jobs are claimed and must be launched.
    options.logger.error(`A claimed observer of ${options.queue} threw: ${(error as Error).message}`);
  }
  return claim;
}

async function confirmedClaim(
  ctx: DurableScriptContext,
  request: Omit<ClaimRequest, 'claimantPrefix'>,
  sentAt: number,
  options: ClaimCallOptions,
): Promise<SentClaim> {
  const sent = { ...request, claimantPrefix: newRequestId() };
  const batch = await claimRepeated(ctx, sent, sentAt, options);
  if (!ctx.durability || batch.jobs.length === 0) return { batch, sentAt };
  // Durable writes: no handler starts before its claim is on the replicas (replicatedClaim).
  // Half the lease is kept for running: past that the jobs go back unstarted.
  const confirmed = await replicatedClaim(ctx, ctx.durability, batch, {
    queue: options.queue,
    claimantPrefix: sent.claimantPrefix,
    giveUpAt: sentAt + request.leaseMs / 2,
    leaseEnd: sentAt + request.leaseMs,
    stopped: options.stopped,
    logger: options.logger,
  });
  return { batch: confirmed, sentAt };
}

async function claimRepeated(
  ctx: ScriptContext,
  sent: ClaimRequest,
  sentAt: number,
  options: ClaimCallOptions,
): Promise<ClaimBatch> {
  const untilMs = sentAt + options.repeatForMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await claimJobs(ctx, sent);
    } catch (error) {
      if (!isTransientRedisError(error) || options.stopped.aborted || monotonicMs() >= untilMs) throw error;
      warnUnlessUnreachable(
        options.logger,
        error,
        `Claim on ${options.queue}: ${error.message}; repeating it (${attempt})`,
      );
      const delay = Math.min(REPEAT_MAX_MS, REPEAT_FIRST_MS * 2 ** (attempt - 1), untilMs - monotonicMs());
      await sleep(delay, undefined, { signal: options.stopped }).catch(() => undefined);
      if (options.stopped.aborted) throw error;
    }
  }
}
