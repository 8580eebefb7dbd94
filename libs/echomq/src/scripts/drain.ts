import { replayWindow, type ScriptContext } from './context';
import { CONTROL_CHUNK_MAX } from './lua/control';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

export { CONTROL_CHUNK_MAX };

/** What one chunk of a bulk control call did: how many jobs, and whether to call again. */
export interface ControlChunk {
  readonly count: number;
  readonly more: boolean;
}

/**
 * One chunk of a drain: up to `limit` pending jobs (every lane and level, oldest first), then
 * scheduled ones unless kept, removed with their rows. `more` is true when the chunk was full.
 * Repeating a call with the same request id returns its first outcome and changes nothing more.
 */
export async function drainChunk(
  ctx: ScriptContext,
  options: { readonly keepScheduled: boolean; readonly limit: number },
  requestId: string = newRequestId(),
): Promise<ControlChunk> {
  const { keys } = ctx;
  const [count, more] = (await runScript(
    ctx,
    'emqDrain',
    [keys.fence, keys.reply(requestId), keys.schedule, keys.metrics, keys.events],
    [options.keepScheduled ? 1 : 0, options.limit, ctx.eventsMaxLen, replayWindow(ctx)],
  )) as [number, number];
  return { count: Number(count), more: Number(more) === 1 };
}
