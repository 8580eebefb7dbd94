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

/** The walk over pending sets starts with this cursor; '' is a finished walk (pending-sets.ts). */
export const WALK_START = 'p';

/** A drain chunk also hands back where its walk over the pending sets stopped. */
export interface DrainChunk extends ControlChunk {
  readonly cursor: string;
}

/**
 * One chunk of a drain: up to `limit` pending jobs along the walk from `cursor` (every lane and
 * level, set by set, each in mint order; at most WALK_SETS_MAX sets a call), then, once the walk
 * is done, scheduled ones unless kept, removed with their rows. `more` is true when the chunk
 * was full or the walk goes on: call again with the cursor returned.
 * Repeating a call with the same request id returns its first outcome and changes nothing more.
 */
export async function drainChunk(
  ctx: ScriptContext,
  options: { readonly keepScheduled: boolean; readonly limit: number; readonly cursor: string },
  requestId: string = newRequestId(),
): Promise<DrainChunk> {
  const { keys } = ctx;
  const [count, more, cursor] = (await runScript(
    ctx,
    'emqDrain',
    [keys.fence, keys.reply(requestId), keys.schedule, keys.metrics, keys.events],
    [options.keepScheduled ? 1 : 0, options.limit, ctx.eventsMaxLen, replayWindow(ctx), options.cursor],
  )) as [number, number, string];
  return { count: Number(count), more: Number(more) === 1, cursor: String(cursor) };
}
