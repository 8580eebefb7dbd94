import type { Logger } from '@nestjs/common';
import { BlockingConnection } from '../connection/blocking-connection';
import type { RedisConnections } from '../connection/redis-connections';
import { warnUnlessUnreachable } from '../connection/warn-unless-unreachable';
import { CuttableDelay } from '../connection/cuttable-delay';

/** Told the claim (id and attempt, its fencing token) of a job removed while active. */
export type CancelListener = (id: string, attempt: number) => void;

/**
 * How long one XREAD blocks when no job is removed: a removal ends it at once; the bound is how
 * soon the connection's watchdog notices a socket that went silent on its own.
 */
const BLOCK_MS = 5_000;
const BATCH = 100;
const RETRY_FIRST_MS = 20;
const RETRY_MAX_MS = 250;

/**
 * The wait before the reader's try `attempt` (1, 2, ...) to reach Redis again, whether it
 * reconnects or reads again after a failed read: doubling from 20 ms to a cap of 250 ms, with
 * jitter. A removal made during an outage is delivered at most about 250 ms after Redis is
 * reachable again (EchoMQ's other connections wait up to 2 s between tries), while a Redis that
 * stays down gets at most 4 to 8 tries a second from each reader.
 */
export function cancelRetryDelay(attempt: number): number {
  const ceiling = Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(attempt - 1, 16));
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2);
}

interface Followed {
  /** The last entry read; unset until the stream's position was taken. */
  cursor?: string;
  readonly listeners: Set<CancelListener>;
  /** Resolves after the first try to take the position. */
  readonly placed: Promise<void>;
  markPlaced(): void;
}

type XReadReply = [key: string, items: [id: string, fields: string[]][]][] | null;

/**
 * Follows some cancels streams with one XREAD BLOCK on one dedicated connection (see
 * CancelWatch for which streams share one). Each stream is read from its last entry at the
 * time it was added, so old removals are never replayed onto new claims, and the position is
 * kept across reconnects and replaced connections: reading resumes after the last entry read.
 * Entries trimmed before they were read (more than the stream's cap while the reader was
 * away) are missed; their jobs' next heartbeat finds the lease lost.
 */
export class CancelReader {
  private readonly streams = new Map<string, Followed>();
  private readonly connection: BlockingConnection;
  private loop?: Promise<void>;
  private closed = false;
  /** The set of streams changed while a read was blocked: its failure is the interruption. */
  private changed = false;
  /** The wait between failed reads; stopping (or a change of streams) cuts it short. */
  private readonly delay = new CuttableDelay();

  constructor(
    private readonly connections: RedisConnections,
    private readonly logger: Logger,
  ) {
    // Its own reconnect schedule: a removal made during an outage arrives soon after Redis is back.
    this.connection = new BlockingConnection(connections, cancelRetryDelay);
  }

  /** Follows `stream` for `listener`; resolves once its position was taken (or first tried). */
  add(stream: string, listener: CancelListener): Promise<void> {
    const known = this.streams.get(stream);
    if (known) {
      known.listeners.add(listener);
      return known.placed;
    }
    let markPlaced!: () => void;
    const placed = new Promise<void>((resolve) => (markPlaced = resolve));
    this.streams.set(stream, { listeners: new Set([listener]), placed, markPlaced });
    this.interrupt();
    this.loop ??= this.follow();
    return placed;
  }

  /** Stops following `stream` for `listener`; returns false once nothing is followed (the reader closed). */
  remove(stream: string, listener: CancelListener): boolean {
    const followed = this.streams.get(stream);
    if (followed?.listeners.delete(listener) && followed.listeners.size === 0) {
      this.streams.delete(stream);
      followed.markPlaced();
      this.interrupt();
    }
    if (this.streams.size > 0) return true;
    this.close();
    return false;
  }

  close(): void {
    this.closed = true;
    for (const followed of this.streams.values()) followed.markPlaced();
    this.streams.clear();
    this.connection.reset();
    this.delay.cutShort();
  }

  /** Ends a blocked read so the next one names the current streams. */
  private interrupt(): void {
    if (!this.loop) return;
    this.changed = true;
    this.connection.reset();
    this.delay.cutShort();
  }

  private async follow(): Promise<void> {
    let failures = 0;
    while (!this.closed && this.streams.size > 0) {
      this.changed = false;
      try {
        await this.placeCursors();
        // A stream added while the positions were taken: take its position first.
        if (this.changed) continue;
        const placed = [...this.streams].filter(([, followed]) => followed.cursor !== undefined);
        const keys = placed.map(([stream]) => stream);
        const cursors = placed.map(([, followed]) => followed.cursor as string);
        const reply = await this.connection.run(BLOCK_MS, (client): Promise<XReadReply> =>
          client.xread('COUNT', BATCH, 'BLOCK', BLOCK_MS, 'STREAMS', ...keys, ...cursors),
        );
        failures = 0;
        // undefined: the watchdog dropped a stuck connection; the next read opens a new one.
        if (reply) this.deliver(reply);
      } catch (error) {
        if (this.closed) break;
        if (this.changed) continue;
        failures += 1;
        warnUnlessUnreachable(this.logger, error, `Cancel reader: ${(error as Error).message}; retrying`);
        await this.delay.wait(cancelRetryDelay(failures));
      }
    }
    this.loop = undefined;
  }

  /**
   * Takes the position of every stream added since the last read: its last entry, or 0-0 when
   * it has none (then everything written from now on is new). Read on the command connection.
   */
  private async placeCursors(): Promise<void> {
    const unplaced = [...this.streams].filter(([, followed]) => followed.cursor === undefined);
    try {
      await Promise.all(
        unplaced.map(async ([stream, followed]) => {
          const last = await this.connections.client.xrevrange(stream, '+', '-', 'COUNT', 1);
          followed.cursor ??= last[0]?.[0] ?? '0-0';
        }),
      );
    } finally {
      for (const [, followed] of unplaced) followed.markPlaced();
    }
  }

  private deliver(reply: NonNullable<XReadReply>): void {
    for (const [stream, items] of reply) {
      const followed = this.streams.get(stream);
      if (!followed) continue;
      for (const [entryId, flat] of items) {
        followed.cursor = entryId;
        const fields: Record<string, string> = {};
        for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
        const attempt = Number(fields.attempt);
        if (!fields.id || !Number.isInteger(attempt)) continue;
        for (const listener of followed.listeners) {
          try {
            listener(fields.id, attempt);
          } catch (error) {
            this.logger.error(`Cancel listener of ${stream}: ${(error as Error).message}`);
          }
        }
      }
    }
  }
}
