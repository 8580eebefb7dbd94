import { Injectable } from '@nestjs/common';
import { ApiConfig } from '../../config/api-config';
import type { ListPage, ListRequest } from './filtered-list';
import type { ListState } from './list-sources';
import { listingsTouchedBy } from './touched-sets';

/** First pages kept at most (across queues); past it the oldest goes first. */
const ENTRIES_MAX = 500;

interface Entry {
  readonly state: ListState;
  readonly startedMono: number;
  readonly page: Promise<ListPage>;
  /** An event changed its set after this read began: its answer may be out of date. */
  stale: boolean;
  /** The one read that follows a stale one, at the end of its interval, shared by every asker until then. */
  next?: Promise<ListPage>;
}

/**
 * First pages of job listings, read at most once per refresh interval each, whatever the
 * number of open pages that show them. Only first pages (no `after`) of queues the event hub
 * follows live are shared, because the hub's events say when one went out of date: an event
 * that can change its set (listingsTouchedBy) marks it stale. A request then gets:
 * - the shared answer, while its read is in flight or began less than an interval ago and is not stale;
 * - if it is stale within that interval, the next read, which begins when the interval ends and
 *   is shared by everyone who asks until then (never an answer from before the event);
 * - else a new read.
 * So a busy queue's list, on any number of pages, costs Redis one read per refresh interval,
 * and a quiet one's is read at once after each change. Other reads go straight to Redis.
 */
@Injectable()
export class SharedListReads {
  private readonly lifeMs: number;
  private readonly byQueue = new Map<string, Map<string, Entry>>();
  private size = 0;

  constructor(config: ApiConfig) {
    this.lifeMs = config.dashboardRefreshMs;
  }

  /** The page `load` reads, shared when `shareable` and it is a first page. */
  read(
    queue: string,
    request: ListRequest,
    shareable: boolean,
    load: () => Promise<ListPage>,
  ): Promise<ListPage> {
    if (!shareable || request.after !== undefined) return load();
    const key = JSON.stringify([request.state, request.name ?? null, request.lane ?? null, request.limit]);
    const kept = this.byQueue.get(queue)?.get(key);
    const age = kept === undefined ? Infinity : performance.now() - kept.startedMono;
    if (kept === undefined || age >= this.lifeMs) return this.start(queue, key, request.state, load);
    if (!kept.stale) return kept.page;
    kept.next ??= new Promise<void>((resolve) => setTimeout(resolve, this.lifeMs - age)).then(() =>
      this.start(queue, key, request.state, load),
    );
    return kept.next;
  }

  /** An event of this type happened on the queue: the shared pages it may have changed are stale. */
  touch(queue: string, type: string): void {
    const entries = this.byQueue.get(queue);
    if (!entries) return;
    const touched = listingsTouchedBy(type);
    for (const entry of entries.values()) if (touched.includes(entry.state)) entry.stale = true;
  }

  /** The queue is no longer followed live: nothing would tell its shared pages they went stale. */
  forget(queue: string): void {
    const entries = this.byQueue.get(queue);
    if (!entries) return;
    this.size -= entries.size;
    this.byQueue.delete(queue);
  }

  private start(
    queue: string,
    key: string,
    state: ListState,
    load: () => Promise<ListPage>,
  ): Promise<ListPage> {
    const page = load();
    this.put(queue, key, { state, startedMono: performance.now(), page, stale: false });
    // A failed read is not shared: the next asker tries again.
    page.catch(() => {
      if (this.byQueue.get(queue)?.get(key)?.page === page) this.remove(queue, key);
    });
    return page;
  }

  private put(queue: string, key: string, entry: Entry): void {
    this.remove(queue, key);
    if (this.size >= ENTRIES_MAX) this.prune(entry.startedMono);
    let entries = this.byQueue.get(queue);
    if (!entries) {
      entries = new Map<string, Entry>();
      this.byQueue.set(queue, entries);
    }
    entries.set(key, entry);
    this.size += 1;
  }

  /** Drops what has outlived its interval; if still full, the oldest entry of the first queue. */
  private prune(now: number): void {
    for (const [queue, entries] of this.byQueue) {
      for (const [key, entry] of entries) if (now - entry.startedMono >= this.lifeMs) this.remove(queue, key);
    }
    if (this.size < ENTRIES_MAX) return;
    const [queue, entries] = this.byQueue.entries().next().value as [string, Map<string, Entry>];
    const oldest = entries.keys().next().value as string;
    this.remove(queue, oldest);
  }

  private remove(queue: string, key: string): void {
    const entries = this.byQueue.get(queue);
    if (!entries?.delete(key)) return;
    this.size -= 1;
    if (entries.size === 0) this.byQueue.delete(queue);
  }
}
