import type { ClaimRef, ScriptContext } from './context';
import { translateReplyError } from './reply-errors';

export type FailOutcome =
  | { readonly state: 'schedule'; readonly runAt: number }
  | { readonly state: 'pending' }
  | { readonly state: 'dead' };

export interface FailRequest {
  readonly error: string;
  /** Delay before the retry; 0 puts the job straight back into pending. */
  readonly backoffMs: number;
  /** Skip the remaining budget and go to dead. */
  readonly unrecoverable: boolean;
}

/** Fails a claimed job. Throws StaleJobError (and changes nothing) when the claim is no longer current. */
export async function failJob(
  ctx: ScriptContext,
  claim: ClaimRef,
  request: FailRequest,
): Promise<FailOutcome> {
  const { keys } = ctx;
  let reply: [string, number];
  try {
    reply = (await ctx.redis.emqFail(
      keys.active,
      keys.pending,
      keys.schedule,
      keys.dead,
      keys.metrics,
      keys.events,
      keys.wake,
      keys.job(claim.id),
      claim.id,
      claim.attempt,
      claim.claimant,
      request.error,
      Math.max(0, Math.round(request.backoffMs)),
      request.unrecoverable ? 1 : 0,
      ctx.eventsMaxLen,
    )) as [string, number];
  } catch (error) {
    translateReplyError(error, claim.id, claim.attempt);
  }
  const [state, runAt] = reply;
  if (state === 'schedule') return { state, runAt: Number(runAt) };
  return { state: state === 'dead' ? 'dead' : 'pending' };
}
