import { StaleJobError } from '../errors';
import { assertJobId } from '../keyspace';
import { replayWindow, type ClaimRef, type ScriptContext } from './context';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

export interface Completion {
  readonly claim: ClaimRef;
  /** The handler's result as JSON text; '' for none. */
  readonly result: string;
}

/**
 * Completes many claimed jobs of one queue in one script call. Per completion, in
 * order: true when completed, false when its claim was stale (nothing changed for it).
 * Repeating the call with the same request id returns the first call's answer.
 */
export async function completeJobs(
  ctx: ScriptContext,
  completions: readonly Completion[],
  keepMs: number,
  requestId: string = newRequestId(),
): Promise<boolean[]> {
  if (completions.length === 0) return [];
  const { keys } = ctx;
  const args: (string | number)[] = [
    keys.jobPrefix,
    keepMs,
    ctx.eventsMaxLen,
    replayWindow(ctx),
    completions.length,
  ];
  // (claimArgs' checks and order, without an array per completion: a batch has up to 500)
  for (const { claim, result } of completions) {
    args.push(assertJobId(claim.id), claim.attempt, claim.claimant, result);
  }
  const reply = (await runScript(
    ctx,
    'emqComplete',
    [keys.fence, keys.reply(requestId), keys.active, keys.metrics, keys.events, keys.wake],
    args,
  )) as number[];
  return reply.map((flag) => Number(flag) === 1);
}

/** Completes one claimed job. Throws StaleJobError (and changes nothing) when the claim is no longer current. */
export async function completeJob(
  ctx: ScriptContext,
  claim: ClaimRef,
  result: string,
  keepMs: number,
  requestId?: string,
): Promise<void> {
  const [completed] = await completeJobs(ctx, [{ claim, result }], keepMs, requestId);
  if (!completed) throw new StaleJobError(claim.id, claim.attempt);
}
