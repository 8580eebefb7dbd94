import { QueueService } from '@app/echomq';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { ApiConfig } from '../../config/api-config';
import { BUCKET_MIN_MS, CounterHistory } from './counter-history';
import type { OverviewFrames } from '../events/sse-stream';
import { overviewFrames } from './overview-frames';
import type { Overview } from './overview.types';
import { readQueues } from './read-queues';

/** One overview as read, with its frames (serialised once, sent to every page). */
export interface OverviewSample {
  readonly overview: Overview;
  readonly frames: OverviewFrames;
}

/**
 * The one reader of the dashboard's overview in this api process. However many pages are open
 * and however often they ask, Redis is read at most once per refresh interval (a read's start is
 * at least refreshMs after the previous one's), and only while someone watches: a held watch
 * (an open event stream) or an overview GET since the last reading began. Concurrent askers share
 * the read in flight; the rest get the latest sample. Each sample feeds the throughput history
 * and is handed to the listeners (the event hub), which push it to the open pages.
 */
@Injectable()
export class OverviewSampler implements OnModuleDestroy {
  private readonly logger = new Logger('Dashboard');
  readonly refreshMs: number;
  readonly bucketMs: number;
  private latest?: { sample: OverviewSample; startedMono: number };
  private inFlight?: Promise<OverviewSample>;
  private lastAttemptMono = -Infinity;
  private lastError?: unknown;
  private timer?: NodeJS.Timeout;
  private holders = 0;
  private lastAskedMono = -Infinity;
  private closed = false;
  private readonly histories = new Map<string, CounterHistory>();
  private readonly listeners = new Set<(sample: OverviewSample) => void>();
  /** Readings started since boot (one per refresh): what the docs' cost figures count. */
  private readings = 0;
  /** Samples made since boot: each one's `seq`, so a stream can tell it sent the one before. */
  private samples = 0;

  constructor(
    private readonly queues: QueueService,
    config: ApiConfig,
  ) {
    this.refreshMs = config.dashboardRefreshMs;
    this.bucketMs = Math.max(BUCKET_MIN_MS, this.refreshMs);
  }

  get readCount(): number {
    return this.readings;
  }

  /** Nothing in flight and nothing armed: no reading happens until a GET or a watch asks. */
  get isIdle(): boolean {
    return this.timer === undefined && this.inFlight === undefined;
  }

  /** The overview for a GET: the latest when fresh, else the reading in flight or a new one. */
  async current(): Promise<OverviewSample> {
    this.lastAskedMono = performance.now();
    try {
      return await this.freshOrRead();
    } finally {
      this.schedule();
    }
  }

  /** Keeps the sampler reading every interval until the returned function is called. */
  watch(): () => void {
    this.holders += 1;
    this.schedule();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holders -= 1;
    };
  }

  /** Calls listener with every new sample; returns the function that stops it. */
  onSample(listener: (sample: OverviewSample) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The latest sample, if its reading began at most `maxAgeMs` ago (default: however old). */
  latestSample(maxAgeMs = Infinity): OverviewSample | undefined {
    const latest = this.latest;
    return latest && performance.now() - latest.startedMono <= maxAgeMs ? latest.sample : undefined;
  }

  async onModuleDestroy(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.inFlight?.catch(() => undefined);
  }

  private async freshOrRead(): Promise<OverviewSample> {
    const now = performance.now();
    if (this.latest && now - this.latest.startedMono < this.refreshMs) return this.latest.sample;
    if (this.inFlight) return this.inFlight;
    if (now - this.lastAttemptMono < this.refreshMs) {
      // The last reading failed less than an interval ago: no second one before its time.
      if (this.latest) return this.latest.sample;
      throw this.lastError;
    }
    return this.read();
  }

  /**
   * Someone watches: an open stream holds a watch, or a GET asked after the last reading began
   * (it was served from that reading, within its interval, and will likely ask again).
   */
  private watched(): boolean {
    return this.holders > 0 || this.lastAskedMono > this.lastAttemptMono;
  }

  /** Arms the next reading at the interval's end, while watched; a reading in flight re-arms when done. */
  private schedule(): void {
    if (this.closed || this.timer || this.inFlight) return;
    const now = performance.now();
    if (!this.watched()) return;
    const dueIn = Math.max(0, this.lastAttemptMono + this.refreshMs - now);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.closed || !this.watched()) return;
      // Timers may fire a fraction of a millisecond early: never read before the interval ends.
      if (performance.now() < this.lastAttemptMono + this.refreshMs) return this.schedule();
      this.read().catch(() => undefined); // logged in read
    }, dueIn);
    this.timer.unref();
  }

  private read(): Promise<OverviewSample> {
    const startedMono = performance.now();
    this.lastAttemptMono = startedMono;
    const reading = this.readOnce(startedMono);
    this.inFlight = reading;
    reading
      .then(
        (sample) => {
          this.latest = { sample, startedMono };
          if (this.lastError !== undefined) this.logger.log('Dashboard overview reads again');
          this.lastError = undefined;
          for (const listener of [...this.listeners]) this.tell(listener, sample);
        },
        (error: unknown) => {
          if (this.lastError === undefined) {
            this.logger.warn(`Dashboard overview could not be read: ${(error as Error).message}`);
          }
          this.lastError = error;
        },
      )
      .finally(() => {
        this.inFlight = undefined;
        this.schedule();
      });
    return reading;
  }

  /** A listener's failure is logged; it never stops the others or the sampler. */
  private tell(listener: (sample: OverviewSample) => void, sample: OverviewSample): void {
    try {
      listener(sample);
    } catch (error) {
      this.logger.error(`Dashboard overview listener failed: ${(error as Error).message}`);
    }
  }

  private async readOnce(startedMono: number): Promise<OverviewSample> {
    const atMs = Date.now();
    this.readings += 1;
    const { queuesTotal, queues } = await readQueues(this.queues);
    const shown = new Set(queues.map(({ queue }) => queue));
    for (const queue of this.histories.keys()) if (!shown.has(queue)) this.histories.delete(queue);
    const overview: Overview = {
      seq: ++this.samples,
      at: new Date(atMs).toISOString(),
      refreshMs: this.refreshMs,
      bucketMs: this.bucketMs,
      queuesTotal,
      queues: queues.map(({ queue, counts, paused, lanes, counters }) => {
        let history = this.histories.get(queue);
        if (!history) {
          history = new CounterHistory(this.bucketMs, Math.max(this.refreshMs * 3, this.bucketMs));
          this.histories.set(queue, history);
        }
        history.record(counters, atMs, startedMono);
        return { queue, counts, paused, lanes, history: history.points() };
      }),
    };
    return { overview, frames: overviewFrames(overview) };
  }
}
