import type { QueueService } from '@app/echomq/internal';
import type { JobResponse } from '../../queues/dto/job.response';
import { toJobResponse } from '../../queues/job-mapping';
import { listSource, type ListItem, type ListState } from './list-sources';

/** The most ids one request examines, matched or not: a filter never turns into a scan of a whole set. */
export const SCAN_WINDOW = 1_000;
/**
 * Ids examined per step while a filter scans. Their views are read together by
 * QueueService.getJobs: a pipelined read per partition the ids name, then one of the queue
 * itself for the ids not found there (jobs from before it was partitioned).
 */
const SCAN_CHUNK = 200;

export interface ListRequest {
  readonly state: ListState;
  readonly limit: number;
  readonly after?: string;
  /** Case-insensitive substring of the job's name. */
  readonly name?: string;
  readonly lane?: string;
}

/** A completed job whose row was not retained: what its event recorded. */
export interface CompletedStub {
  readonly id: string;
  readonly queue: string;
  readonly state: 'completed';
  readonly finishedAt: string;
  readonly result?: unknown;
}

export interface ListPage {
  readonly jobs: (JobResponse | CompletedStub)[];
  /** Continues after the last id examined; null when the listing ended. */
  readonly next: string | null;
}

type Entry = JobResponse | CompletedStub;

/**
 * One page of a state's jobs, filtered by name and/or lane. The ids come in the listing's own
 * order (pending and dead newest first, active and schedule by deadline, completed newest
 * first); a filter is applied to their views, read a chunk at a time, until `limit` matched or
 * SCAN_WINDOW ids were examined. `next` then continues after the last id examined, so a rare
 * name is found over several requests, each of bounded cost, never by one unbounded scan.
 */
export async function listFiltered(
  queues: QueueService,
  queue: string,
  request: ListRequest,
): Promise<ListPage> {
  const { state, limit, name, lane } = request;
  // A pending listing of one lane is served by that lane's own set: only a name filters.
  const laneScoped = state === 'pending' && lane !== undefined;
  const filtered = name !== undefined || (lane !== undefined && !laneScoped);
  // Ids this request may read from its cursor: the window when filtering, else its page (each + 1 beyond).
  const reach = (filtered ? SCAN_WINDOW : limit) + 1;
  const source = listSource(queues, queue, state, lane, reach);
  const needle = name?.toLowerCase();
  const matches = (entry: Entry): boolean =>
    'name' in entry &&
    (needle === undefined || entry.name.toLowerCase().includes(needle)) &&
    (lane === undefined || entry.lane === lane);

  const jobs: Entry[] = [];
  let cursor = request.after;
  let examined = 0;
  while (examined < SCAN_WINDOW) {
    const room = filtered ? SCAN_CHUNK : limit - jobs.length;
    const count = Math.min(room, SCAN_WINDOW - examined);
    // One more than used, to tell "ended here" from "more after".
    const items = await source(cursor, count + 1);
    const used = items.slice(0, count);
    const entries = await entriesOf(queues, queue, state, used);
    for (let i = 0; i < used.length; i++) {
      examined += 1;
      cursor = used[i].cursor;
      const entry = entries[i];
      if (entry && (!filtered || matches(entry))) jobs.push(entry);
      if (jobs.length === limit) {
        const more = i < used.length - 1 || items.length > count;
        return { jobs, next: more ? cursor : null };
      }
    }
    if (items.length <= count) return { jobs, next: null };
  }
  return { jobs, next: cursor ?? null };
}

/** The entries of these ids, aligned (undefined for a job that finished or moved out of reach meanwhile). */
async function entriesOf(
  queues: QueueService,
  queue: string,
  state: ListState,
  items: readonly ListItem[],
): Promise<(Entry | undefined)[]> {
  if (items.length === 0) return [];
  const views = await queues.getJobs(
    queue,
    items.map(({ id }) => id),
  );
  return items.map((item, index) => {
    const view = views[index];
    if (state !== 'completed') return view && toJobResponse(view);
    if (view?.state === 'completed') return toJobResponse(view);
    return {
      id: item.id,
      queue,
      state: 'completed',
      finishedAt: (item.completedAt ?? new Date(0)).toISOString(),
      ...(item.result === undefined ? {} : { result: item.result }),
    };
  });
}
