import { FINISHING_TYPES, type QueueEvent } from './queue-event';

/** How many recently finished jobs a reader remembers for waits that arrive after the event. */
export const RECENT_MAX = 10_000;

/**
 * The finishing event (completed / dead / removed) of the last RECENT_MAX jobs that
 * finished, so a wait that begins just after its job finished (with no row kept)
 * still learns the outcome. Capped, oldest first out: memory does not grow with history.
 */
export class RecentOutcomes {
  private readonly byId = new Map<string, QueueEvent>();

  constructor(private readonly max = RECENT_MAX) {}

  get size(): number {
    return this.byId.size;
  }

  get(id: string): QueueEvent | undefined {
    return this.byId.get(id);
  }

  remember(event: QueueEvent): void {
    if (event.type === 'retried') {
      // A retried job is alive again: its old outcome no longer answers a wait.
      for (const id of event.ids) this.byId.delete(id);
      return;
    }
    if (!FINISHING_TYPES.has(event.type)) return;
    for (const id of event.ids) {
      this.byId.delete(id); // re-insert so the map stays in finishing order
      this.byId.set(id, event);
    }
    for (const oldest of this.byId.keys()) {
      if (this.byId.size <= this.max) break;
      this.byId.delete(oldest);
    }
  }
}
