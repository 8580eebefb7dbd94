/**
 * When the reaper next looks at each queue it knows, on this process's monotonic clock. The
 * reaper sleeps until the soonest entry instead of ticking on a fixed interval, so an idle
 * queue costs one look per interval, and a lease or a scheduled run is looked at when it is due.
 */
export class ReaperAgenda {
  private readonly due = new Map<string, number>();

  /** The queues known, in the order they were added. */
  queues(): string[] {
    return [...this.due.keys()];
  }

  has(queue: string): boolean {
    return this.due.has(queue);
  }

  /** Looks at `queue` at `at` (replacing what was planned). */
  set(queue: string, at: number): void {
    this.due.set(queue, at);
  }

  /** Looks at `queue` by `at`: keeps an earlier plan, adds the queue when it is new. */
  byAt(queue: string, at: number): void {
    const planned = this.due.get(queue);
    if (planned === undefined || at < planned) this.due.set(queue, at);
  }

  drop(queue: string): void {
    this.due.delete(queue);
  }

  /** The soonest planned look; undefined when no queue is known. */
  soonest(): number | undefined {
    let soonest: number | undefined;
    for (const at of this.due.values()) if (soonest === undefined || at < soonest) soonest = at;
    return soonest;
  }

  /** The queues whose look is due by `now`, soonest first. */
  dueBy(now: number): string[] {
    return [...this.due]
      .filter(([, at]) => at <= now)
      .sort(([, a], [, b]) => a - b)
      .map(([queue]) => queue);
  }
}
