import { claimArgs, type ClaimRef, type ScriptContext } from './context';

/** Gives claims back to pending without spending their retry budget. Per claim: true when released. */
export async function releaseJobs(ctx: ScriptContext, claims: readonly ClaimRef[]): Promise<boolean[]> {
  if (claims.length === 0) return [];
  const { keys } = ctx;
  const reply = (await ctx.redis.emqRelease(
    keys.active,
    keys.pending,
    keys.metrics,
    keys.events,
    keys.wake,
    keys.jobPrefix,
    ctx.eventsMaxLen,
    claims.length,
    ...claimArgs(claims),
  )) as number[];
  return reply.map((flag) => Number(flag) === 1);
}
