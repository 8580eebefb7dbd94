import { QueueService, type QueueEvent } from '@app/echomq';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Response } from 'express';
import { errorBody } from '../../errors/error-body';
import { SharedListReads } from '../lists/shared-reads';
import { OverviewSampler, type OverviewSample } from '../overview/overview-sampler';
import { QueueFollower } from './queue-follower';
import { PAGE_BUFFER_MAX, SseStream, type StreamOptions } from './sse-stream';

/** At most one burst per page per this interval: events in between are written together. */
export const BURST_MS = 250;
export const HEARTBEAT_MS = 15_000;
/** What EventSource waits before it reconnects a dropped stream. */
export const RECONNECT_MS = 3_000;
/** Lease heartbeats: every active job every lease/3, and nothing a page shows changes. */
const UNFORWARDED = new Set(['extended']);

/**
 * The dashboard's live feed in this api process: every open page's event stream, fed by the
 * overview sampler (every page) and by one subscription per queue that an open page shows
 * (`?queue=`: a queue or job view; the overview page takes no job events). Subscriptions and the
 * sampler's watch start with the first page and stop with the last. A stream opened on a
 * dashboard session ends when the session does: at its expiry, or at the first burst after a
 * logout. After module destroy no stream is opened (503): the server is closing.
 */
@Injectable()
export class DashboardEventHub implements OnModuleDestroy {
  private readonly logger = new Logger('Dashboard');
  private readonly streams = new Set<SseStream>();
  /** The open streams of each queue, for routing its job events. */
  private readonly byQueue = new Map<string, Set<SseStream>>();
  private readonly follower: QueueFollower;
  private stopWatch?: () => void;
  private stopSamples?: () => void;
  private burstTimer?: NodeJS.Timeout;
  private heartbeatTimer?: NodeJS.Timeout;
  private closed = false;

  constructor(
    queues: QueueService,
    private readonly sampler: OverviewSampler,
    private readonly lists: SharedListReads,
  ) {
    this.follower = new QueueFollower(
      queues,
      this.logger,
      (queue, event) => this.onEvent(queue, event),
      (queue) => this.lists.forget(queue),
    );
  }

  /** Open pages right now. */
  get pageCount(): number {
    return this.streams.size;
  }

  /** Queues followed right now (each one subscription). */
  get followedQueues(): string[] {
    return this.follower.followed;
  }

  /** Resolves true once the queue's subscription is live (its events reach the pages), false if it is not followed. */
  following(queue: string): Promise<boolean> {
    return this.follower.following(queue);
  }

  /** Whether the queue's events reach this process now: an open page shows it and its subscription is up. */
  isLive(queue: string): boolean {
    return this.follower.isLive(queue);
  }

  /** Starts a page's stream on this response; returns the function that ends it. */
  open(response: Response, options: StreamOptions = {}): () => void {
    if (this.closed) {
      response.status(503).json(errorBody(503, 'The api is shutting down; the page reconnects to another'));
      return () => undefined;
    }
    const stream = new SseStream(response, options);
    // A sample older than two intervals would show stale depths until the next one: wait for that.
    stream.open(RECONNECT_MS, this.sampler.latestSample(2 * this.sampler.refreshMs)?.frames);
    stream.endAtExpiry(() => this.close(stream));
    this.streams.add(stream);
    if (this.streams.size === 1) this.start();
    if (stream.queue !== undefined) {
      let pages = this.byQueue.get(stream.queue);
      if (!pages) this.byQueue.set(stream.queue, (pages = new Set()));
      pages.add(stream);
      this.follower.add(stream.queue);
    }
    return () => this.close(stream);
  }

  onModuleDestroy(): void {
    this.closed = true;
    // Open streams would keep the HTTP server from closing.
    for (const stream of this.streams) stream.end();
    this.streams.clear();
    this.byQueue.clear();
    this.stop();
  }

  private close(stream: SseStream): void {
    if (!this.streams.delete(stream)) return;
    stream.end();
    if (stream.queue !== undefined) {
      const pages = this.byQueue.get(stream.queue);
      pages?.delete(stream);
      if (pages?.size === 0) this.byQueue.delete(stream.queue);
      this.follower.remove(stream.queue);
    }
    if (this.streams.size === 0) this.stop();
  }

  private start(): void {
    this.stopSamples = this.sampler.onSample((sample) => this.onSample(sample));
    this.stopWatch = this.sampler.watch();
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
    this.follower.stopAll();
  }

  /** Every page's waiting messages; a page whose session ended (logout) is closed instead. */
  private burst(): void {
    for (const stream of this.streams) {
      if (stream.authorised) stream.flush();
      else this.close(stream);
    }
  }

  private onSample(sample: OverviewSample): void {
    for (const stream of this.streams) stream.offerOverview(sample.frames);
    this.follower.retry();
  }

  private onEvent(queue: string, event: QueueEvent): void {
    if (UNFORWARDED.has(event.type)) return;
    // First, so a page told of this event reads past it rather than a shared page from before.
    this.lists.touch(queue, event.type);
    const pages = this.byQueue.get(queue);
    if (!pages) return;
    // No page takes more than PAGE_BUFFER_MAX of one burst: a batch past that is only counted.
    const ids: (string | null)[] = event.ids.length > 0 ? event.ids.slice(0, PAGE_BUFFER_MAX) : [null];
    const beyond = Math.max(0, event.ids.length - ids.length);
    const messages = ids.map((id) => JSON.stringify({ queue, type: event.type, id }));
    for (const stream of pages) stream.offerJobs(messages, beyond);
  }
}
