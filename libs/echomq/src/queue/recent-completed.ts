import { describeValue, InvalidArgumentError } from '../errors';
import { parseQueueEvent } from '../events/parse-queue-event';
import { parseEntry } from '../events/queue-event';
import type { JobId } from '../ids';
import { optionsOf } from '../option-checks';
import type { ScriptContext } from '../scripts';

/** Most completions one recentCompleted call returns, and its default. */
export const RECENT_COMPLETED_MAX = 1_000;
export const RECENT_COMPLETED_DEFAULT = 100;

/** Stream entries read per round trip: a short XREVRANGE each, never the whole stream at once. */
export const RECENT_COMPLETED_PAGE = 200;

export interface RecentCompletedOptions {
  /** How many to return at most: an integer from 1 to 1,000. Default 100. */
  readonly limit?: number;
}

/** One job as its 'completed' event recorded it. */
export interface RecentCompletion {
  readonly id: JobId;
  /** When the completing script ran (the stream entry's time: the Redis server's clock). */
  readonly completedAt: Date;
  /**
   * The handler's result when the event carried it; undefined for none, and for results too
   * large for the event (over 1 KiB): those are read with getJob while the row is retained.
   */
  readonly result?: unknown;
}

/** The limit asked for; only undefined means the default (a null limit is refused, not read as absent). */
export function limitOf(options: RecentCompletedOptions): number {
  const { limit = RECENT_COMPLETED_DEFAULT } = optionsOf(options, ['limit'], 'recentCompleted options');
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > RECENT_COMPLETED_MAX) {
    throw new InvalidArgumentError(
      `limit must be an integer from 1 to ${RECENT_COMPLETED_MAX}, got ${describeValue(limit)}`,
    );
  }
  return limit;
}

/** The completions of one entry, newest first (the last id of a batch first, so the whole list reverses the stream). */
function completionsOf(queue: string, streamId: string, flat: readonly string[]): RecentCompletion[] {
  const event = parseQueueEvent(queue, parseEntry(streamId, flat));
  if (event.type !== 'completed') return [];
  const completedAt = new Date(event.at);
  const out: RecentCompletion[] = [];
  for (let i = event.ids.length - 1; i >= 0; i--) {
    const result = event.results[i];
    out.push(
      result === undefined ? { id: event.ids[i], completedAt } : { id: event.ids[i], completedAt, result },
    );
  }
  return out;
}

/**
 * Recently completed jobs, newest first, read back from the queue's event stream (which holds
 * them already: no index of its own). Pages through the stream newest first, COUNT entries a
 * call, until `limit` completions or the stream's start; the stream is capped (eventsMaxLen),
 * so what it gives is a window (docs/retention.md). Options other than `{ limit }` and a bad
 * limit throw InvalidArgumentError before anything is sent.
 */
export async function recentCompleted(
  ctx: ScriptContext,
  options: RecentCompletedOptions = {},
): Promise<RecentCompletion[]> {
  const limit = limitOf(options);
  const found: RecentCompletion[] = [];
  let end = '+';
  // The walk ends at the stream's start; the stream holds about eventsMaxLen entries (MAXLEN ~
  // keeps a little more), so twice that bounds it even if a process with a larger cap wrote it.
  const pagesMax = Math.ceil((ctx.eventsMaxLen * 2) / RECENT_COMPLETED_PAGE) + 1;
  for (let page = 0; page < pagesMax && found.length < limit; page++) {
    const entries = await ctx.redis.xrevrange(ctx.keys.events, end, '-', 'COUNT', RECENT_COMPLETED_PAGE);
    for (const [streamId, flat] of entries) {
      for (const completion of completionsOf(ctx.keys.queue, streamId, flat)) {
        if (found.length < limit) found.push(completion);
      }
    }
    if (entries.length < RECENT_COMPLETED_PAGE) break;
    end = `(${entries[entries.length - 1][0]}`;
  }
  return found;
}
