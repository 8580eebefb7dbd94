import { Logger } from '@nestjs/common';
import type { QueueKeys } from '../keyspace';
import { BlockingConnection } from '../connection/blocking-connection';
import type { RedisConnections } from '../connection/redis-connections';
import type { RedisClient } from '../scripts';
import { callIsolated } from './isolate';
import {
  compareStreamIds,
  FINISHING_TYPES,
  parseEntry,
  type QueueEvent,
  type QueueEventListener,
} from './queue-event';
import { RecentOutcomes } from './recent-outcomes';
import { startPosition, streamHead, streamTail, trimmedPast } from './stream-position';
import { WaiterIndex, type EventWaiter } from './waiter-index';
import { warnUnlessUnreachable } from '../connection/warn-unless-unreachable';
import { CuttableDelay } from '../connection/cuttable-delay';

const BLOCK_MS = 5_000;
const BATCH = 1_000;
const BACKOFF_MAX_MS = 5_000;

/**
 * Follows one queue's event stream on a dedicated connection (XREAD BLOCK) and hands
 * each entry to the queue's subscribers and to the waits of the jobs it names, so any
 * number of waitFor calls and subscribers share one connection per queue.
 *
 * - It starts a minute back on the server's clock and remembers recent outcomes, so a
 *   wait that starts just after its job finished still sees the outcome.
 * - Listeners run isolated: the cursor has already moved on, so an error that escaped
 *   one would make everything after it miss the entry.
 * - When events may have been missed (the connection was replaced or reconnected, or
 *   entries were trimmed before they were read) every wait is told to read its job again.
 */
export class QueueEventReader {
  private readonly logger = new Logger('EchoMQ');
  private readonly listeners = new Set<QueueEventListener>();
  private readonly waiters = new WaiterIndex();
  private readonly recent = new RecentOutcomes();
  private readonly connection: BlockingConnection;
  private running = true;
  /** The last entry delivered (or the start position). */
  private cursor: string;
  private catchUpWaiters: { target: string; resolve: () => void }[] = [];
  /** The client whose reconnects are watched; another one means the connection was replaced. */
  private watched?: RedisClient;
  private missedPossible = false;
  /** The cursor at which a gap was last reported, so one gap is reported once. */
  private gapAt?: string;
  /** The wait between failed reads; stopping (or a change of streams) cuts it short. */
  private readonly delay = new CuttableDelay();
  private markClosed!: () => void;
  /** Resolves once the reader has stopped and its read loop has ended. */
  readonly closed = new Promise<void>((resolve) => (this.markClosed = resolve));

  private constructor(
    private readonly connections: RedisConnections,
    private readonly keys: QueueKeys,
    /** The start position: not an entry, so no gap can be measured from it. */
    private readonly origin: string,
  ) {
    this.connection = new BlockingConnection(connections);
    this.cursor = origin;
  }

  static async start(connections: RedisConnections, keys: QueueKeys): Promise<QueueEventReader> {
    const reader = new QueueEventReader(connections, keys, await startPosition(connections.client, keys));
    // The backlog is read before the reader is handed out, so finished() already knows it.
    while ((await reader.readBatch(connections.client, false)) === BATCH);
    void reader.follow();
    return reader;
  }

  get stopped(): boolean {
    return !this.running;
  }

  /** Subscribers plus waits: what keeps the reader worth running. */
  interest(): number {
    return this.listeners.size + this.waiters.size;
  }

  /** How many times an event was handed to a wait (each wait sees only its own job's events). */
  get waiterCalls(): number {
    return this.waiters.dispatched;
  }

  /** The event that finished this job, if it finished recently (and was not retried since). */
  finished(id: string): QueueEvent | undefined {
    return this.recent.get(id);
  }

  subscribe(listener: QueueEventListener): () => void {
    // A wrapper per subscription, so subscribing one function twice gives two subscriptions.
    const entry: QueueEventListener = (event) => listener(event);
    this.listeners.add(entry);
    return () => this.listeners.delete(entry);
  }

  /** Registers a wait for one job's finishing event; returns the function that removes it. */
  watch(id: string, waiter: EventWaiter): () => void {
    return this.waiters.add(id, waiter);
  }

  /** Resolves once every entry now on the stream has been delivered (at once when stopped). */
  async caughtUp(): Promise<void> {
    const target = await streamTail(this.connections.client, this.keys);
    if (!this.running || compareStreamIds(this.cursor, target) >= 0) return;
    await new Promise<void>((resolve) => this.catchUpWaiters.push({ target, resolve }));
  }

  stop(): void {
    this.running = false;
    this.connection.reset();
    this.delay.cutShort();
    for (const waiter of this.catchUpWaiters) waiter.resolve();
    this.catchUpWaiters = [];
  }

  private async follow(): Promise<void> {
    let failures = 0;
    while (this.running) {
      const before = this.cursor;
      try {
        const read = await this.connection.run(BLOCK_MS, (client) => {
          this.watchConnection(client);
          return this.readBatch(client, true);
        });
        // undefined: the watchdog dropped a stuck connection; the next read opens a new one.
        if (read === undefined) continue;
        failures = 0;
        if (this.missedPossible) this.recheckWaits();
        await this.checkGap(before);
      } catch (error) {
        if (!this.running) break;
        failures += 1;
        this.missedPossible = true;
        warnUnlessUnreachable(
          this.logger,
          error,
          `Event reader of ${this.keys.queue}: ${(error as Error).message}; retrying`,
        );
        await this.delay.wait(Math.min(BACKOFF_MAX_MS, 50 * 2 ** failures));
      }
    }
    this.markClosed();
  }

  /**
   * Notes reconnects of the reading connection. ioredis resends a blocked XREAD after a
   * reconnect, so the loop itself may never see an error; the wait's jobs may have
   * finished while it was away (and their entries been trimmed since).
   */
  private watchConnection(client: RedisClient): void {
    if (this.watched === client) return;
    if (this.watched) this.missedPossible = true; // a replacement: the old connection failed
    this.watched = client;
    client.on('close', () => {
      if (this.running && this.watched === client) this.missedPossible = true;
    });
    client.on('ready', () => {
      if (this.running && this.watched === client && this.missedPossible) this.recheckWaits();
    });
  }

  /** After a read: if entries after `before` were trimmed unread, the waits read their jobs again. */
  private async checkGap(before: string): Promise<void> {
    if (this.waiters.size === 0 || before === this.origin || before === this.gapAt) return;
    const head = await streamHead(this.connections.client, this.keys);
    if (!trimmedPast(before, head)) return;
    this.gapAt = before;
    this.logger.warn(
      `Event reader of ${this.keys.queue}: entries after ${before} may have been trimmed unread; ` +
        `re-reading ${this.waiters.size} waited jobs`,
    );
    this.recheckWaits();
  }

  private recheckWaits(): void {
    this.missedPossible = false;
    for (const waiter of this.waiters.all()) {
      void callIsolated(this.logger, `Wait recheck on ${this.keys.queue}`, () => waiter.recheck());
    }
  }

  /** Reads and delivers one batch after the cursor; returns how many entries it held. */
  private async readBatch(client: RedisClient, block: boolean): Promise<number> {
    const reply = block
      ? await client.xread('COUNT', BATCH, 'BLOCK', BLOCK_MS, 'STREAMS', this.keys.events, this.cursor)
      : await client.xread('COUNT', BATCH, 'STREAMS', this.keys.events, this.cursor);
    const entries = reply?.[0]?.[1] ?? [];
    for (const [streamId, flat] of entries) {
      this.cursor = streamId;
      this.deliver(parseEntry(streamId, flat));
    }
    this.releaseCaughtUp();
    return entries.length;
  }

  private deliver(event: QueueEvent): void {
    this.recent.remember(event);
    const what = `Event listener of ${this.keys.queue} (${event.type} ${event.streamId})`;
    for (const listener of [...this.listeners]) void callIsolated(this.logger, what, () => listener(event));
    if (!FINISHING_TYPES.has(event.type)) return;
    this.waiters.forEvent(
      event,
      (waiter) => void callIsolated(this.logger, what, () => waiter.onEvent(event)),
    );
  }

  private releaseCaughtUp(): void {
    if (this.catchUpWaiters.length === 0) return;
    const still: typeof this.catchUpWaiters = [];
    for (const waiter of this.catchUpWaiters) {
      if (compareStreamIds(this.cursor, waiter.target) >= 0) waiter.resolve();
      else still.push(waiter);
    }
    this.catchUpWaiters = still;
  }
}
