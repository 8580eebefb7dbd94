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
}

/**
 * One chunk of a clean: the ids removed, oldest first; fewer than `limit` when no more were
 * old enough (pending, dead) or when candidates had moved on (schedule). Repeating a call
 * with the same request id returns the same ids and changes nothing more.
 */
export async function cleanChunk(
  ctx: ScriptContext,
  chunk: CleanChunk,
  requestId: string = newRequestId(),
): Promise<JobId[]> {
  const { keys } = ctx;
  return (await runScript(
    ctx,
    'emqClean',
    [keys.fence, keys.reply(requestId), keys.schedule, keys.dead, keys.metrics, keys.events],
    [
      chunk.state,
      chunk.olderThanMs,
      chunk.limit,
      ctx.eventsMaxLen,
      replayWindow(ctx),
      ...(chunk.candidates ?? []),
    ],
  )) as JobId[];
}
