import { Logger } from '@nestjs/common';
import type { QueueKeys } from '../keyspace';
import { BlockingConnection } from '../connection/blocking-connection';
import type { RedisConnections } from '../connection/redis-connections';
import type { RedisClient } from '../scripts';

/** One transition as recorded on a queue's event stream. */
export interface QueueEvent {
  /** The stream entry id (server time - sequence). */
  readonly streamId: string;
  /** enqueued | claimed | extended | completed | failed | dead | released | reaped | promoted | retried | removed | progress */
  readonly type: string;
  /** The jobs the event is about (one for per-job events, many for batch events). */
  readonly ids: readonly string[];
  /** Every field of the entry as written by the script (result, error, attempt, ...). */
  readonly fields: Readonly<Record<string, string>>;
}

export type QueueEventListener = (event: QueueEvent) => void;

const BLOCK_MS = 5_000;
/** How far back a new reader starts, so a job that finished just before the first wait is still seen. */
const LOOKBACK_MS = 60_000;
/** How many recently finished jobs a reader remembers for waits that arrive after the event. */
const RECENT_MAX = 10_000;
const FINISHING = new Set(['completed', 'dead', 'removed']);
const BATCH = 1_000;

function parseEntry(streamId: string, flat: string[]): QueueEvent {
  const fields: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  const ids = fields.ids ? fields.ids.split(',') : [];
  return { streamId, type: fields.type ?? '', ids, fields };
}

/** Compares two stream ids ("ms-seq") numerically. */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number);
  const [bm, bs] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}

/**
 * Follows one queue's event stream on a dedicated connection (XREAD BLOCK) and
 * fans entries out to listeners, so any number of waitFor calls and subscribers
 * share one connection per queue. It starts a minute back in the stream and
 * remembers the last finishing event (completed / dead / removed) of recently
 * finished jobs, so a wait that starts after its job finished still sees the outcome.
 */
export class QueueEventReader {
  private readonly logger = new Logger('EchoMQ');
  private readonly listeners = new Set<QueueEventListener>();
  private readonly recent = new Map<string, QueueEvent>();
  private readonly connection: BlockingConnection;
  private running = true;
  private catchUpWaiters: { target: string; resolve: () => void }[] = [];

  private constructor(
    private readonly connections: RedisConnections,
    private readonly keys: QueueKeys,
    private cursor: string,
  ) {
    this.connection = new BlockingConnection(connections);
  }

  static async start(connections: RedisConnections, keys: QueueKeys): Promise<QueueEventReader> {
    const reader = new QueueEventReader(connections, keys, `${Date.now() - LOOKBACK_MS}-0`);
    // The backlog is read before the reader is handed out, so finished() already knows it.
    while ((await reader.readBatch(connections.client, false)) === BATCH);
    void reader.follow();
    return reader;
  }

  /** The event that finished this job, if it finished recently (and was not retried since). */
  finished(id: string): QueueEvent | undefined {
    return this.recent.get(id);
  }

  private static async tail(client: RedisClient, keys: QueueKeys): Promise<string> {
    const last = await client.xrevrange(keys.events, '+', '-', 'COUNT', 1);
    return last.length > 0 ? last[0][0] : '0-0';
  }

  subscribe(listener: QueueEventListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once every entry now on the stream has been delivered to listeners. */
  async caughtUp(): Promise<void> {
    const target = await QueueEventReader.tail(this.connections.client, this.keys);
    if (compareStreamIds(this.cursor, target) >= 0) return;
    await new Promise<void>((resolve) => this.catchUpWaiters.push({ target, resolve }));
  }

  stop(): void {
    this.running = false;
    this.connection.reset();
    for (const waiter of this.catchUpWaiters) waiter.resolve();
    this.catchUpWaiters = [];
  }

  private async follow(): Promise<void> {
    let failures = 0;
    while (this.running) {
      try {
        await this.connection.run(BLOCK_MS, (client) => this.readBatch(client, true));
        failures = 0;
      } catch (error) {
        if (!this.running) break;
        failures += 1;
        this.logger.warn(`Event reader of ${this.keys.queue}: ${(error as Error).message}; retrying`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(5_000, 50 * 2 ** failures)));
      }
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
      const event = parseEntry(streamId, flat);
      this.remember(event);
      for (const listener of this.listeners) listener(event);
    }
    this.releaseCaughtUp();
    return entries.length;
  }

  private remember(event: QueueEvent): void {
    if (FINISHING.has(event.type)) {
      for (const id of event.ids) {
        this.recent.delete(id); // re-insert so the map stays in finishing order
        this.recent.set(id, event);
      }
      for (const oldest of this.recent.keys()) {
        if (this.recent.size <= RECENT_MAX) break;
        this.recent.delete(oldest);
      }
    } else if (event.type === 'retried') {
      for (const id of event.ids) this.recent.delete(id);
    }
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
