import { QueueBusyError } from '../errors';
import { replayWindow, type ScriptContext } from './context';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

/** How long obliterate leaves the cancels stream for the workers still reading it. */
export const CANCELS_KEEP_MS = 60_000;

export interface ObliterateChunk {
  /** Jobs removed by this call. */
  readonly removed: number;
  /** True once every job and key of the queue is gone: stop calling. */
  readonly done: boolean;
}

/**
 * One chunk of an obliterate (see obliterate.lua.ts). Throws QueueBusyError, having written
 * nothing, when active holds jobs and `force` is false. `removedBefore` is the jobs the earlier
 * calls removed (the last event reports the total). Repeating a call with the same request id
 * returns its first outcome and changes nothing more.
 */
export async function obliterateChunk(
  ctx: ScriptContext,
  options: { readonly force: boolean; readonly limit: number; readonly removedBefore: number },
  requestId: string = newRequestId(),
): Promise<ObliterateChunk> {
  const { keys } = ctx;
  try {
    const [removed, done] = (await runScript(
      ctx,
      'emqObliterate',
      [
        keys.fence,
        keys.reply(requestId),
        keys.active,
        keys.schedule,
        keys.dead,
        keys.paused,
        keys.events,
        keys.cancels,
        keys.wake,
      ],
      [
        options.force ? 1 : 0,
        options.limit,
        ctx.eventsMaxLen,
        replayWindow(ctx),
        CANCELS_KEEP_MS,
        options.removedBefore,
      ],
    )) as [number, number];
    return { removed: Number(removed), done: Number(done) === 1 };
  } catch (error) {
    const busy = error instanceof Error ? /^(?:ERR )?EMQ_QUEUE_BUSY (\d+)/.exec(error.message) : null;
    if (busy) throw new QueueBusyError(keys.queue, Number(busy[1]));
    throw error;
  }
}
