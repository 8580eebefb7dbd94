import { replayWindow, type ScriptContext } from './context';
import { newRequestId } from './request-id';
import { translateReplyError } from './reply-errors';
import { runScript } from './run-script';

export { CANCELS_MAX_LEN } from './lua/remove.lua';

/** The state a removed job was in; 'orphan' is a row in no set that never finished (invariant 2 broken). */
export type RemovedFrom = 'pending' | 'active' | 'schedule' | 'dead' | 'completed' | 'orphan';

/**
 * Removes a job from whatever state it is in. Throws JobNotFoundError when there is none.
 * An active job's claim goes on the queue's cancels stream, so the worker running it aborts it.
 * Repeating a call that succeeded with the same request id returns the same state.
 */
export async function removeJob(
  ctx: ScriptContext,
  id: string,
  requestId: string = newRequestId(),
): Promise<RemovedFrom> {
  const { keys } = ctx;
  try {
    return (await runScript(
      ctx,
      'emqRemove',
      [
        keys.fence,
        keys.reply(requestId),
        keys.pending,
        keys.active,
        keys.schedule,
        keys.dead,
        keys.metrics,
        keys.events,
        keys.job(id),
        keys.wake,
      ],
      [id, keys.idempotencyPrefix, ctx.eventsMaxLen, replayWindow(ctx)],
    )) as RemovedFrom;
  } catch (error) {
    translateReplyError(error, id);
  }
}
