import type { QueueEvent } from './queue-event';

/** One waitFor as the reader sees it. */
export interface EventWaiter {
  /** A finishing event that names the waiter's job. */
  onEvent(event: QueueEvent): void;
  /** The reader may have missed events (it reconnected, or entries were trimmed unread): read the job again. */
  recheck(): void;
}

/**
 * The waits of one reader, keyed by job id, so an event costs a lookup per id it
 * names, however many waits the process holds. `calls` counts waiter invocations,
 * so that cost can be observed.
 */
export class WaiterIndex {
  private readonly byId = new Map<string, Set<EventWaiter>>();
  private count = 0;
  private calls = 0;

  /** How many waits are registered. */
  get size(): number {
    return this.count;
  }

  /** How many times an event has been handed to a waiter, since the reader started. */
  get dispatched(): number {
    return this.calls;
  }

  /** Registers a waiter for one job; returns the function that removes it (idempotent). */
  add(id: string, waiter: EventWaiter): () => void {
    let set = this.byId.get(id);
    if (!set) this.byId.set(id, (set = new Set()));
    set.add(waiter);
    this.count += 1;
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      this.count -= 1;
      set.delete(waiter);
      if (set.size === 0 && this.byId.get(id) === set) this.byId.delete(id);
    };
  }

  /** Calls `deliver` for each waiter of each job the event names. */
  forEvent(event: QueueEvent, deliver: (waiter: EventWaiter) => void): void {
    for (const id of event.ids) {
      const set = this.byId.get(id);
      if (!set) continue;
      for (const waiter of [...set]) {
        this.calls += 1;
        deliver(waiter);
      }
    }
  }

  /** Every registered waiter (a snapshot: waiters may finish while it is walked). */
  all(): EventWaiter[] {
    const all: EventWaiter[] = [];
    for (const set of this.byId.values()) all.push(...set);
    return all;
  }
}
