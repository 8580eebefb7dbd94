import {
  assertJobId,
  RECENT_COMPLETED_MAX,
  type QueueService,
  type RecentCompletion,
  type StateSet,
} from '@app/echomq/internal';
import { byScore, parseScoreCursor } from './score-listing';

/** One id of a listing and the cursor that continues right after it. */
export interface ListItem {
  readonly id: string;
  readonly cursor: string;
  /** completed only: when it completed, from its event. */
  readonly completedAt?: Date;
  readonly result?: unknown;
}

/**
 * A listing read in order, a page at a time: up to `count` items after `cursor` (undefined:
 * from the start). Fewer than `count` means the listing ended.
 */
export type ListSource = (cursor: string | undefined, count: number) => Promise<ListItem[]>;

export type ListState = StateSet | 'completed';

/**
 * Pending and dead: newest first by id, continued after an id (the library's own browse, which
 * merges a partitioned queue's partitions on the ids themselves, so paging stays exact).
 */
function byId(queues: QueueService, queue: string, state: 'pending' | 'dead', lane?: string): ListSource {
  return async (cursor, count) => {
    const ids = await queues.browse(queue, state, {
      limit: count,
      ...(cursor === undefined ? {} : { after: cursor }),
      ...(lane === undefined ? {} : { lane }),
    });
    return ids.map((id) => ({ id, cursor: id }));
  };
}

/**
 * Completed: the recent-completed history (newest first, from the event stream), which has no
 * cursor of its own: a page continues after the id given, found in the history read again. The
 * history is read once per request (one walk of the stream, newest first) and every chunk the
 * request asks for is cut from it: `reach` ids from the start when the request starts there,
 * else the whole window (at most RECENT_COMPLETED_MAX). An id that aged out ends the listing.
 */
function completed(queues: QueueService, queue: string, reach: number): ListSource {
  let read: Promise<RecentCompletion[]> | undefined;
  return async (cursor, count) => {
    const limit = cursor === undefined ? Math.min(reach, RECENT_COMPLETED_MAX) : RECENT_COMPLETED_MAX;
    read ??= queues.recentCompleted(queue, { limit });
    const recent = await read;
    const start = cursor === undefined ? 0 : recent.findIndex(({ id }) => id === cursor) + 1;
    if (start === 0 && cursor !== undefined) return [];
    return recent.slice(start, start + count).map(({ id, completedAt, result }) => ({
      id,
      cursor: id,
      completedAt,
      ...(result === undefined ? {} : { result }),
    }));
  };
}

/**
 * The source of one state's listing, for one request that reads at most `reach` ids (those it
 * uses and the one beyond) from its cursor; a pending listing of one lane is read from that lane alone.
 */
export function listSource(
  queues: QueueService,
  queue: string,
  state: ListState,
  lane: string | undefined,
  reach: number,
): ListSource {
  switch (state) {
    case 'pending':
      return byId(queues, queue, 'pending', lane);
    case 'dead':
      return byId(queues, queue, 'dead');
    case 'active':
    case 'schedule':
      return byScore(queues, queue, state);
    case 'completed':
      return completed(queues, queue, reach);
  }
}

/** Checks an id cursor (pending, dead, completed) before anything is read. */
export function checkCursor(state: ListState, cursor: string | undefined): void {
  if (cursor === undefined) return;
  if (state === 'active' || state === 'schedule') parseScoreCursor(cursor);
  else assertJobId(cursor);
}
