import type { QueueEvent, QueueService } from '@app/echomq';
import type { Logger } from '@nestjs/common';

type Unsubscribe = () => void;

/** A subscription whose events reach the hub, and the physical queues it reads. */
interface Delivering {
  readonly subscription: Promise<Unsubscribe | undefined>;
  /** The queue's physical queues when it began (a partitioned queue: its partitions and itself). */
  readonly physical: string;
}

/**
 * The queues the open pages show, each followed by one QueueService.subscribe (so one event
 * reader per physical queue per process, however many pages show it: a partitioned queue's
 * subscription reads every partition). A queue is followed from the first page that asks for it
 * until the last one leaves. A subscription that failed is forgotten and tried again at retry()
 * (the hub calls it at each overview refresh), which also subscribes afresh to a queue whose
 * partitions changed since its subscription began, so a raised count's new partitions are
 * followed too; the old subscription delivers until the new one is up, so no event falls between.
 */
export class QueueFollower {
  private readonly wanted = new Map<string, number>();
  /** Each followed queue's latest subscription, live or starting. */
  private readonly subscriptions = new Map<string, Promise<Unsubscribe | undefined>>();
  /** The subscription of each queue whose events reach the hub now. */
  private readonly delivering = new Map<string, Delivering>();

  constructor(
    private readonly queues: QueueService,
    private readonly logger: Logger,
    private readonly onEvent: (queue: string, event: QueueEvent) => void,
    private readonly onUnfollow: (queue: string) => void,
  ) {}

  /** Queues with a subscription right now (live or starting). */
  get followed(): string[] {
    return [...this.subscriptions.keys()];
  }

  /** Whether the queue's events reach the hub now (its subscription is up). */
  isLive(queue: string): boolean {
    return this.delivering.has(queue);
  }

  /** Resolves true once the queue's latest subscription is live, false if it is not followed. */
  async following(queue: string): Promise<boolean> {
    const subscription = this.subscriptions.get(queue);
    return subscription !== undefined && (await subscription) !== undefined;
  }

  /** One more page shows this queue. */
  add(queue: string): void {
    const count = (this.wanted.get(queue) ?? 0) + 1;
    this.wanted.set(queue, count);
    if (!this.subscriptions.has(queue)) this.subscribe(queue);
  }

  /** One page fewer shows it; the last one leaving ends the subscription. */
  remove(queue: string): void {
    const count = (this.wanted.get(queue) ?? 0) - 1;
    if (count > 0) {
      this.wanted.set(queue, count);
      return;
    }
    this.wanted.delete(queue);
    this.unfollow(queue);
  }

  /**
   * Subscribes again to wanted queues whose subscription failed, and afresh to live ones whose
   * partitions changed (their layouts come from memory: no read of Redis for an unchanged queue).
   */
  retry(): void {
    for (const queue of this.wanted.keys()) if (!this.subscriptions.has(queue)) this.subscribe(queue);
    for (const queue of this.delivering.keys()) void this.followMoves(queue);
  }

  stopAll(): void {
    this.wanted.clear();
    for (const queue of [...this.subscriptions.keys()]) this.unfollow(queue);
  }

  private async followMoves(queue: string): Promise<void> {
    const current = this.delivering.get(queue);
    // A replacement already starting, or none live: nothing to compare.
    if (!current || this.subscriptions.get(queue) !== current.subscription) return;
    const physical = await this.queues.partitionLayout(queue).then(
      (layout) => layout.physical.join(','),
      () => undefined,
    );
    if (physical === undefined || physical === current.physical) return;
    if (this.delivering.get(queue) === current && this.subscriptions.get(queue) === current.subscription)
      this.subscribe(queue);
  }

  private subscribe(queue: string): void {
    let physical = '';
    const subscription: Promise<Unsubscribe | undefined> = this.queues
      .partitionLayout(queue)
      .then((layout) => {
        physical = layout.physical.join(',');
        return this.queues.subscribe(queue, (event) => {
          if (this.delivering.get(queue)?.subscription === subscription) this.onEvent(queue, event);
        });
      })
      .then(
        (unsubscribe) => {
          if (this.subscriptions.get(queue) === subscription) {
            const replaced = this.delivering.get(queue);
            this.delivering.set(queue, { subscription, physical });
            // The one replaced stops only now that this one delivers: no event falls between them.
            void replaced?.subscription.then((stop) => stop?.());
          }
          return unsubscribe;
        },
        (error: unknown) => {
          this.logger.warn(`Dashboard cannot follow ${queue}: ${(error as Error).message}; retrying`);
          if (this.subscriptions.get(queue) === subscription) {
            // A failed replacement leaves the live subscription in place; a failed first one is tried again.
            const live = this.delivering.get(queue);
            if (live) this.subscriptions.set(queue, live.subscription);
            else this.subscriptions.delete(queue);
          }
          return undefined;
        },
      );
    this.subscriptions.set(queue, subscription);
  }

  private unfollow(queue: string): void {
    const latest = this.subscriptions.get(queue);
    const live = this.delivering.get(queue)?.subscription;
    this.subscriptions.delete(queue);
    this.delivering.delete(queue);
    this.onUnfollow(queue);
    for (const subscription of new Set([latest, live])) void subscription?.then((stop) => stop?.());
  }
}
