import { replayWindow, type ScriptContext } from './context';
import { newRequestId } from './request-id';
import { translateReplyError } from './reply-errors';
import { runScript } from './run-script';

/**
 * dead -> pending with a fresh budget. Throws JobNotFoundError or JobStateError (not dead).
 * Repeating a call that succeeded with the same request id succeeds again, changing nothing.
 */
export async function retryDead(
  ctx: ScriptContext,
  id: string,
  requestId: string = newRequestId(),
): Promise<void> {
  const { keys } = ctx;
  try {
    await runScript(
      ctx,
      'emqRetry',
      [
        keys.fence,
        keys.reply(requestId),
        keys.dead,
        keys.pending,
        keys.metrics,
        keys.events,
        keys.wake,
        keys.job(id),
      ],
      [id, ctx.eventsMaxLen, replayWindow(ctx)],
    );
  } catch (error) {
    translateReplyError(error, id);
  }
}
