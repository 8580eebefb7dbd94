import { claimArgs, type ClaimRef, type ScriptContext } from './context';

export interface ExtendOutcome {
  readonly leaseDeadline: number;
  /** Per claim, in order: true when extended, false when the lease is lost (stale). */
  readonly held: boolean[];
}

export async function extendLeases(
  ctx: ScriptContext,
  claims: readonly ClaimRef[],
  leaseMs: number,
): Promise<ExtendOutcome> {
  const { keys } = ctx;
  const reply = (await ctx.redis.emqExtend(
    keys.active,
    keys.metrics,
    keys.events,
    keys.jobPrefix,
    leaseMs,
    ctx.eventsMaxLen,
    claims.length,
    ...claimArgs(claims),
  )) as number[];
  return { leaseDeadline: Number(reply[0]), held: reply.slice(1).map((flag) => Number(flag) === 1) };
}
