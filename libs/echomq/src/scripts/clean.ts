import type { JobId } from '../ids';
import { replayWindow, type ScriptContext } from './context';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

/** The states clean removes from (active jobs are removed one by one; completed rows expire). */
export type CleanState = 'pending' | 'schedule' | 'dead';

export interface CleanChunk {
  readonly state: CleanState;
  /** Jobs enqueued more than this many ms before the script runs (server clock). */
  readonly olderThanMs: number;
  /** At most this many jobs (1 .. CONTROL_CHUNK_MAX). */
  readonly limit: number;
  /** schedule only: the candidates, oldest first (each is checked again by the script). */
  readonly candidates?: readonly JobId[];
  /** pending only: where the walk over the lanes' sets goes on (WALK_START first; drain.ts). */
  readonly cursor?: string;
}

/** What one clean chunk did: the ids removed, and the walk's cursor ('' once it is done). */
export interface CleanedChunk {
  readonly ids: JobId[];
  readonly cursor: string;
}

/**
 * One chunk of a clean: the ids removed. pending goes lane by lane along a walk of at most
 * WALK_SETS_MAX sets a call (each set's old ids oldest first) and hands back the cursor to go on
 * at ('' once every set was seen); dead is oldest first, fewer than `limit` when no more were old
 * enough; schedule takes the candidates still scheduled and old enough. Repeating a call with
 * the same request id returns the same reply and changes nothing more.
 */
export async function cleanChunk(
  ctx: ScriptContext,
  chunk: CleanChunk,
  requestId: string = newRequestId(),
): Promise<CleanedChunk> {
  const { keys } = ctx;
  const [cursor, ...ids] = (await runScript(
    ctx,
    'emqClean',
    [keys.fence, keys.reply(requestId), keys.schedule, keys.dead, keys.metrics, keys.events],
    [
      chunk.state,
      chunk.olderThanMs,
      chunk.limit,
      ctx.eventsMaxLen,
      replayWindow(ctx),
      chunk.state === 'pending' ? (chunk.cursor ?? 'p') : '',
      ...(chunk.candidates ?? []),
    ],
  )) as string[];
  return { ids: ids as JobId[], cursor: String(cursor) };
}
