import { JobStateError } from '../errors';
import { replayWindow, type ScriptContext } from './context';
import { translateReplyError } from './reply-errors';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

/**
 * schedule -> pending now, whatever the job's run-at. Throws JobNotFoundError, or JobStateError
 * when the job is not scheduled. Repeating a call that succeeded with the same request id
 * succeeds again, changing nothing.
 */
export async function promoteJob(
  ctx: ScriptContext,
  id: string,
  requestId: string = newRequestId(),
): Promise<void> {
  const { keys } = ctx;
  try {
    await runScript(
      ctx,
      'emqPromoteJob',
      [keys.fence, keys.reply(requestId), keys.schedule, keys.metrics, keys.events, keys.wake, keys.job(id)],
      [id, ctx.eventsMaxLen, replayWindow(ctx)],
    );
  } catch (error) {
    if (error instanceof Error && /^(?:ERR )?EMQ_NOT_SCHEDULED/.test(error.message)) {
      throw new JobStateError(id, 'scheduled');
    }
    translateReplyError(error, id);
  }
}
