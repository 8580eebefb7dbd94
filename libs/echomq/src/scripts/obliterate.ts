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
  /** Where the next call's walk over the lanes' pending sets goes on. */
  readonly cursor: string;
  /** True when this call began a new walk: pending jobs came in behind the last one. */
  readonly again: boolean;
}

/**
 * One chunk of an obliterate (see obliterate.lua.ts). Throws QueueBusyError, having written
 * nothing, when active holds unexpired leases and `force` is false. `cursor` is WALK_START
 * (drain.ts) for the first call, then the one the last call returned. `removedBefore` is the jobs the earlier
 * calls removed (the last event reports the total). Repeating a call with the same request id
 * returns its first outcome and changes nothing more.
 */
export async function obliterateChunk(
  ctx: ScriptContext,
  options: {
    readonly force: boolean;
    readonly limit: number;
    readonly removedBefore: number;
    readonly cursor: string;
  },
  requestId: string = newRequestId(),
): Promise<ObliterateChunk> {
  const { keys } = ctx;
  try {
    const [removed, done, cursor, again] = (await runScript(
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
        options.cursor,
      ],
    )) as [number, number, string, number];
    return {
      removed: Number(removed),
      done: Number(done) === 1,
      cursor: String(cursor),
      again: Number(again) === 1,
    };
  } catch (error) {
    const busy = error instanceof Error ? /^(?:ERR )?EMQ_QUEUE_BUSY (\d+)/.exec(error.message) : null;
    if (busy) throw new QueueBusyError(keys.queue, Number(busy[1]));
    throw error;
  }
}
