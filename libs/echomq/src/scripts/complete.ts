import type { ClaimRef, ScriptContext } from './context';
import { translateReplyError } from './reply-errors';

/** Completes a claimed job. Throws StaleJobError (and changes nothing) when the claim is no longer current. */
export async function completeJob(
  ctx: ScriptContext,
  claim: ClaimRef,
  result: string,
  keepMs: number,
): Promise<void> {
  const { keys } = ctx;
  try {
    await ctx.redis.emqComplete(
      keys.active,
      keys.metrics,
      keys.events,
      keys.job(claim.id),
      claim.id,
      claim.attempt,
      claim.claimant,
      result,
      keepMs,
      ctx.eventsMaxLen,
    );
  } catch (error) {
    translateReplyError(error, claim.id, claim.attempt);
  }
}
