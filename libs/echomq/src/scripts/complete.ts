import { StaleJobError } from '../errors';
import { claimArgs, type ClaimRef, type ScriptContext } from './context';

export interface Completion {
  readonly claim: ClaimRef;
  /** The handler's result as JSON text; '' for none. */
  readonly result: string;
}

/**
 * Completes many claimed jobs of one queue in one script call. Per completion, in
 * order: true when completed, false when its claim was stale (nothing changed for it).
 */
export async function completeJobs(
  ctx: ScriptContext,
  completions: readonly Completion[],
  keepMs: number,
): Promise<boolean[]> {
  if (completions.length === 0) return [];
  const { keys } = ctx;
  const args: (string | number)[] = [keepMs, ctx.eventsMaxLen, completions.length];
  for (const { claim, result } of completions) args.push(...claimArgs([claim]), result);
  const reply = (await ctx.redis.emqComplete(
    keys.active,
    keys.metrics,
    keys.events,
    keys.jobPrefix,
    ...args,
  )) as number[];
  return reply.map((flag) => Number(flag) === 1);
}

/** Completes one claimed job. Throws StaleJobError (and changes nothing) when the claim is no longer current. */
export async function completeJob(
  ctx: ScriptContext,
  claim: ClaimRef,
  result: string,
  keepMs: number,
): Promise<void> {
  const [completed] = await completeJobs(ctx, [{ claim, result }], keepMs);
  if (!completed) throw new StaleJobError(claim.id, claim.attempt);
}
