import { claimArgs, replayWindow, type ClaimRef, type ScriptContext } from './context';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

/**
 * Gives claims back to pending without spending their retry budget. Per claim: true when
 * released. Repeating the call with the same request id returns the first call's answer.
 */
export async function releaseJobs(
  ctx: ScriptContext,
  claims: readonly ClaimRef[],
  requestId: string = newRequestId(),
): Promise<boolean[]> {
  if (claims.length === 0) return [];
  const { keys } = ctx;
  const reply = (await runScript(
    ctx,
    'emqRelease',
    [keys.fence, keys.reply(requestId), keys.active, keys.pending, keys.metrics, keys.events, keys.wake],
    [keys.jobPrefix, ctx.eventsMaxLen, replayWindow(ctx), claims.length, ...claimArgs(claims)],
  )) as number[];
  return reply.map((flag) => Number(flag) === 1);
}
