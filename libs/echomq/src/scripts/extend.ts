import { claimArgs, replayWindow, type ClaimRef, type ScriptContext } from './context';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

export interface ExtendOutcome {
  /** now + leaseMs on the server clock; a held claim's deadline is at least this (never shortened). */
  readonly leaseDeadline: number;
  /** Per claim, in order: true when held (extended), false when the lease is lost (stale). */
  readonly held: boolean[];
}

/**
 * The heartbeat. It writes no event (a beat per worker every lease/3 would crowd completions out
 * of the capped stream); the metrics counter 'extended' counts the leases it extended. Repeating
 * the call with the same request id returns the first call's answer.
 */
export async function extendLeases(
  ctx: ScriptContext,
  claims: readonly ClaimRef[],
  leaseMs: number,
  requestId: string = newRequestId(),
): Promise<ExtendOutcome> {
  if (claims.length === 0) return { leaseDeadline: 0, held: [] };
  const { keys } = ctx;
  const reply = (await runScript(
    ctx,
    'emqExtend',
    [keys.fence, keys.reply(requestId), keys.active, keys.metrics, keys.events],
    [keys.jobPrefix, leaseMs, replayWindow(ctx), claims.length, ...claimArgs(claims)],
  )) as number[];
  return { leaseDeadline: Number(reply[0]), held: reply.slice(1).map((flag) => Number(flag) === 1) };
}
