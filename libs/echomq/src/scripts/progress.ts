import type { ClaimRef, ScriptContext } from './context';
import { translateReplyError } from './reply-errors';
import { runScript } from './run-script';

/** Stores a running job's progress. Throws StaleJobError when the claim is no longer current. */
export async function recordProgress(ctx: ScriptContext, claim: ClaimRef, progress: string): Promise<void> {
  const { keys } = ctx;
  try {
    await runScript(
      ctx,
      'emqProgress',
      [keys.fence, keys.events, keys.job(claim.id)],
      [claim.id, claim.attempt, claim.claimant, progress, ctx.eventsMaxLen],
    );
  } catch (error) {
    translateReplyError(error, claim.id, claim.attempt);
  }
}
