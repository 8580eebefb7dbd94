import { replayWindow, type ScriptContext } from './context';
import type { ControlChunk } from './drain';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

/**
 * One chunk of retry all: up to `limit` dead jobs (oldest first) back to pending with a fresh
 * budget. `more` is true while dead still holds jobs. Repeating a call with the same request
 * id returns its first outcome and changes nothing more.
 */
export async function retryDeadChunk(
  ctx: ScriptContext,
  limit: number,
  requestId: string = newRequestId(),
): Promise<ControlChunk> {
  const { keys } = ctx;
  const [count, more] = (await runScript(
    ctx,
    'emqRetryAll',
    [keys.fence, keys.reply(requestId), keys.dead, keys.metrics, keys.events, keys.wake],
    [limit, ctx.eventsMaxLen, replayWindow(ctx)],
  )) as [number, number];
  return { count: Number(count), more: Number(more) === 1 };
}
