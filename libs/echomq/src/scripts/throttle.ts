import { describeValue, InvalidArgumentError } from '../errors';
import { replayWindow, type ClaimRef, type ScriptContext } from './context';
import { THROTTLE_HOLD_MAX_MS } from './lua/throttle.lua';
import { newRequestId } from './request-id';
import { translateReplyError } from './reply-errors';
import { runScript } from './run-script';

/** What a throttle holds back: the whole queue, or only the lane of the job that was limited. */
export type ThrottleScope = 'queue' | 'lane';

function checkHold(holdMs: number, scope: ThrottleScope): void {
  if (!Number.isSafeInteger(holdMs) || holdMs < 1 || holdMs > THROTTLE_HOLD_MAX_MS) {
    throw new InvalidArgumentError(
      `throttle: holdMs must be an integer from 1 to ${THROTTLE_HOLD_MAX_MS}, got ${describeValue(holdMs)}`,
    );
  }
  if (scope !== 'queue' && scope !== 'lane') {
    throw new InvalidArgumentError(`throttle: scope must be 'queue' or 'lane', got ${describeValue(scope)}`);
  }
}

/**
 * Gives a claimed job back to pending without spending its attempt, because a service its
 * handler called limited it (RateLimitedError), and holds back the queue or the job's lane,
 * for every worker, for holdMs (a longer hold already in force stays). Throws StaleJobError
 * (and changes nothing) when the claim is no longer current. Repeating the call with the same
 * request id returns the first call's answer.
 */
export async function throttleJob(
  ctx: ScriptContext,
  claim: ClaimRef,
  holdMs: number,
  scope: ThrottleScope,
  requestId: string = newRequestId(),
): Promise<void> {
  checkHold(holdMs, scope);
  const { keys } = ctx;
  try {
    await runScript(
      ctx,
      'emqThrottle',
      [
        keys.fence,
        keys.reply(requestId),
        keys.active,
        keys.metrics,
        keys.events,
        keys.wake,
        keys.job(claim.id),
      ],
      [claim.id, claim.attempt, claim.claimant, holdMs, scope, ctx.eventsMaxLen, replayWindow(ctx)],
    );
  } catch (error) {
    translateReplyError(error, claim.id, claim.attempt);
  }
}
