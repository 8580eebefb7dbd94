import type { QueueEvent, QueueService } from '@app/echomq';
import type { Logger } from '@nestjs/common';

/**
 * The queues the open pages show, each followed by one QueueService.subscribe (so one event
 * reader per physical queue per process, however many pages show it). A partitioned queue's
 * subscription reads every partition, and follows the partitions a raised count adds (it looks
 * for them itself every 5 s). A queue is followed from the first page that asks for it until the
 * last one leaves. A subscription that failed is forgotten and tried again at retry() (the hub
 * calls it at each overview refresh).
 */
export class QueueFollower {
  private readonly wanted = new Map<string, number>();
  private readonly subscriptions = new Map<string, Promise<(() => void) | undefined>>();
  private readonly live = new Set<string>();

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
    return this.live.has(queue);
  }

  /** Resolves true once the queue's subscription is live, false if it is not followed. */
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

  /** Subscribes again to wanted queues whose subscription failed. */
  retry(): void {
    for (const queue of this.wanted.keys()) if (!this.subscriptions.has(queue)) this.subscribe(queue);
  }

  stopAll(): void {
    this.wanted.clear();
    for (const queue of [...this.subscriptions.keys()]) this.unfollow(queue);
  }

  private subscribe(queue: string): void {
    const subscription: Promise<(() => void) | undefined> = this.queues
      .subscribe(queue, (event) => this.onEvent(queue, event))
      .then(
        (unsubscribe) => {
          if (this.subscriptions.get(queue) === subscription) this.live.add(queue);
          return unsubscribe;
        },
        (error: unknown) => {
          this.logger.warn(`Dashboard cannot follow ${queue}: ${(error as Error).message}; retrying`);
          if (this.subscriptions.get(queue) === subscription) this.subscriptions.delete(queue);
          return undefined;
        },
      );
    this.subscriptions.set(queue, subscription);
  }

  private unfollow(queue: string): void {
    const subscription = this.subscriptions.get(queue);
    this.subscriptions.delete(queue);
    this.live.delete(queue);
    this.onUnfollow(queue);
    void subscription?.then((unsubscribe) => unsubscribe?.());
  }
}
