import { replayWindow, type ClaimRef, type ScriptContext } from './context';
import { DEAD_RETENTION_DEFAULTS, deadRetentionArgs, type DeadRetention } from './dead-retention';
import { newRequestId } from './request-id';
import { runScript } from './run-script';
import { translateReplyError } from './reply-errors';

export type FailOutcome =
  | { readonly state: 'schedule'; readonly runAt: number }
  | { readonly state: 'pending' }
  | { readonly state: 'dead' };

export interface FailRequest {
  readonly error: string;
  /** The error's stack trace, kept on the row as the job's lastErrorStack; absent when it has none. */
  readonly stack?: string;
  /** Delay before the retry; 0 puts the job straight back into pending. */
  readonly backoffMs: number;
  /** Skip the remaining budget and go to dead. */
  readonly unrecoverable: boolean;
  /** How much of dead to keep when this job goes there (the failing worker's options); defaults when absent. */
  readonly dead?: DeadRetention;
}

/**
 * Fails a claimed job. A job that goes to dead trims dead in the same call (oldest first, to the
 * request's deadMaxJobs and deadMaxAgeMs; see into_dead in the prelude). Throws StaleJobError (and changes nothing) when the claim is no longer
 * current. Repeating the call with the same request id returns the first call's answer.
 */
export async function failJob(
  ctx: ScriptContext,
  claim: ClaimRef,
  request: FailRequest,
  requestId: string = newRequestId(),
): Promise<FailOutcome> {
  const { keys } = ctx;
  let reply: [string, number];
  try {
    reply = (await runScript(
      ctx,
      'emqFail',
      [
        keys.fence,
        keys.reply(requestId),
        keys.active,
        keys.pending,
        keys.schedule,
        keys.dead,
        keys.metrics,
        keys.events,
        keys.wake,
        keys.job(claim.id),
      ],
      [
        claim.id,
        claim.attempt,
        claim.claimant,
        request.error,
        Math.max(0, Math.round(request.backoffMs)),
        request.unrecoverable ? 1 : 0,
        ctx.eventsMaxLen,
        replayWindow(ctx),
        ...deadRetentionArgs(request.dead ?? DEAD_RETENTION_DEFAULTS),
        request.stack ?? '',
      ],
    )) as [string, number];
  } catch (error) {
    translateReplyError(error, claim.id, claim.attempt);
  }
  const [state, runAt] = reply;
  if (state === 'schedule') return { state, runAt: Number(runAt) };
  return { state: state === 'dead' ? 'dead' : 'pending' };
}
