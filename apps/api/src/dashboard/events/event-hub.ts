import { QueueService, type QueueEvent } from '@app/echomq';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Response } from 'express';
import { OverviewSampler, type OverviewSample } from '../overview/overview-sampler';
import { PAGE_BUFFER_MAX, SseStream } from './sse-stream';

/** At most one burst per page per this interval: events in between are written together. */
export const BURST_MS = 250;
export const HEARTBEAT_MS = 15_000;
/** What EventSource waits before it reconnects a dropped stream. */
export const RECONNECT_MS = 3_000;
/** Lease heartbeats: every active job every lease/3, and nothing a page shows changes. */
const UNFORWARDED = new Set(['extended']);

/**
 * The dashboard's live feed in this api process: every open page's event stream, fed by one
 * subscription per shown queue (QueueService.subscribe, so one event reader per queue per
 * process however many pages are open) and by the overview sampler. Subscriptions and the
 * sampler's watch start with the first page and stop with the last; the queues followed are
 * those of the latest overview, so a new queue is followed from the next refresh on.
 */
@Injectable()
export class DashboardEventHub implements OnModuleDestroy {
  private readonly logger = new Logger('Dashboard');
  private readonly streams = new Set<SseStream>();
  private readonly subscriptions = new Map<string, Promise<(() => void) | undefined>>();
  private stopWatch?: () => void;
  private stopSamples?: () => void;
  private burstTimer?: NodeJS.Timeout;
  private heartbeatTimer?: NodeJS.Timeout;

  constructor(
    private readonly queues: QueueService,
    private readonly sampler: OverviewSampler,
  ) {}

  /** Open pages right now. */
  get pageCount(): number {
    return this.streams.size;
  }

  /** Queues followed right now (each one subscription). */
  get followedQueues(): string[] {
    return [...this.subscriptions.keys()];
  }

  /** Resolves true once the queue's subscription is live (its events reach the pages), false if it is not followed. */
  async following(queue: string): Promise<boolean> {
    const subscription = this.subscriptions.get(queue);
    return subscription !== undefined && (await subscription) !== undefined;
  }

  /** Starts a page's stream on this response; returns the function that ends it. */
  open(response: Response): () => void {
    const stream = new SseStream(response);
    stream.open(RECONNECT_MS, this.sampler.latestSample()?.json);
    this.streams.add(stream);
    if (this.streams.size === 1) this.start();
    return () => this.close(stream);
  }

  onModuleDestroy(): void {
    // Open streams would keep the HTTP server from closing.
    for (const stream of this.streams) stream.end();
    this.streams.clear();
    this.stop();
  }

  private close(stream: SseStream): void {
    if (!this.streams.delete(stream)) return;
    stream.end();
    if (this.streams.size === 0) this.stop();
  }

  private start(): void {
    this.stopSamples = this.sampler.onSample((sample) => this.onSample(sample));
    this.stopWatch = this.sampler.watch();
    const latest = this.sampler.latestSample();
    if (latest) this.follow(latest);
    this.burstTimer = setInterval(() => this.burst(), BURST_MS);
    this.heartbeatTimer = setInterval(() => {
      for (const stream of this.streams) stream.heartbeat();
    }, HEARTBEAT_MS);
  }

  private stop(): void {
    this.stopSamples?.();
    this.stopWatch?.();
    this.stopSamples = this.stopWatch = undefined;
    clearInterval(this.burstTimer);
    clearInterval(this.heartbeatTimer);
    this.burstTimer = this.heartbeatTimer = undefined;
    for (const queue of [...this.subscriptions.keys()]) this.unfollow(queue);
  }

  private burst(): void {
    for (const stream of this.streams) stream.flush();
  }

  private onSample(sample: OverviewSample): void {
    for (const stream of this.streams) stream.offerOverview(sample.json);
    this.follow(sample);
  }

  /** Follows exactly the queues of this overview. */
  private follow(sample: OverviewSample): void {
    const shown = new Set(sample.overview.queues.map(({ queue }) => queue));
    for (const queue of this.subscriptions.keys()) if (!shown.has(queue)) this.unfollow(queue);
    for (const queue of shown) if (!this.subscriptions.has(queue)) this.subscribe(queue);
  }

  private subscribe(queue: string): void {
    const subscription = this.queues
      .subscribe(queue, (event) => this.onEvent(queue, event))
      .catch((error: unknown) => {
        this.logger.warn(`Dashboard cannot follow ${queue}: ${(error as Error).message}; retrying`);
        // Forgotten, so the next refresh tries again.
        if (this.subscriptions.get(queue) === subscription) this.subscriptions.delete(queue);
        return undefined;
      });
    this.subscriptions.set(queue, subscription);
  }

  private unfollow(queue: string): void {
    const subscription = this.subscriptions.get(queue);
    this.subscriptions.delete(queue);
    void subscription?.then((unsubscribe) => unsubscribe?.());
  }

  private onEvent(queue: string, event: QueueEvent): void {
    if (UNFORWARDED.has(event.type) || this.streams.size === 0) return;
    // No page takes more than PAGE_BUFFER_MAX of one burst: a batch past that is only counted.
    const ids: (string | null)[] = event.ids.length > 0 ? event.ids.slice(0, PAGE_BUFFER_MAX) : [null];
    const beyond = Math.max(0, event.ids.length - ids.length);
    const messages = ids.map((id) => JSON.stringify({ queue, type: event.type, id }));
    for (const stream of this.streams) stream.offerJobs(messages, beyond);
  }
}
