import type { Logger } from '@nestjs/common';
import { RedisUnavailableError } from '../errors';

/** While Redis stays unreachable, the warning is repeated this often (with the next failed attempt). */
export const UNREACHABLE_REMINDER_MS = 60_000;

/** The connection events of a Redis or a Cluster client. */
export interface ConnectionEvents {
  on(event: 'ready' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * Whether EchoMQ's command connection reaches Redis, and what is said about it. ioredis
 * reports each failed reconnect attempt as an 'error' event, several a second at first;
 * this turns them into one warning naming the target when Redis cannot be reached, a
 * reminder every UNREACHABLE_REMINDER_MS while that lasts, and one line once it is back.
 *
 * It also tells a disconnection from an outage. A connection down for less than one command
 * deadline is a restart or a failover, worth waiting for (DeadlineRedis holds a command that
 * long); one down for longer (or never up since boot, for that long) is an outage, and a
 * caller that would only wait for it, such as the id minter, fails at once instead.
 */
export class Reachability {
  /** When the connection went down; set from the start, since it is not up yet. */
  private downSince: number | undefined;
  private lastError?: string;
  /** When this episode's warning (or its latest reminder) was logged; undefined if none was. */
  private warnedAt?: number;
  private readonly watchers = new Set<() => void>();

  constructor(
    /** host:port, a socket path or the cluster's seeds; never credentials. */
    readonly target: string,
    /** How long a connection may be down before it is an outage: the command deadline. */
    readonly outageAfterMs: number,
    private readonly logger: Pick<Logger, 'log' | 'warn'>,
    private readonly clock: () => number = Date.now,
  ) {
    this.downSince = clock();
  }

  /** Follows a client's connection events (this also handles its 'error' events). */
  watch(client: ConnectionEvents): void {
    client.on('ready', () => this.connected());
    client.on('close', () => this.disconnected());
    client.on('error', (error) => this.failed(error));
  }

  get reachable(): boolean {
    return this.downSince === undefined;
  }

  /** The last connection error while unreachable, e.g. "connect ECONNREFUSED 127.0.0.1:6379". */
  get reason(): string | undefined {
    return this.reachable ? undefined : this.lastError;
  }

  /** How long the connection has been down; 0 while it is up. */
  downForMs(): number {
    return this.downSince === undefined ? 0 : this.clock() - this.downSince;
  }

  inOutage(): boolean {
    return this.downSince !== undefined && this.downForMs() >= this.outageAfterMs;
  }

  /**
   * Rejects with RedisUnavailableError as soon as the connection is in an outage (at once if
   * it is in one now), for racing against a wait that only Redis can end. It never resolves;
   * aborting `signal` stops the watch.
   */
  outage(signal: AbortSignal): Promise<never> {
    return new Promise<never>((_, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const stop = (): void => {
        clearTimeout(timer);
        this.watchers.delete(check);
        signal.removeEventListener('abort', stop);
      };
      const check = (): void => {
        clearTimeout(timer);
        if (this.inOutage()) {
          stop();
          reject(new RedisUnavailableError(this.target, this.downForMs()));
        } else if (this.downSince !== undefined) {
          // Down, not yet for a whole deadline: look again when it would be.
          timer = setTimeout(check, this.outageAfterMs - this.downForMs());
        }
      };
      if (signal.aborted) return;
      signal.addEventListener('abort', stop);
      this.watchers.add(check);
      check();
    });
  }

  private connected(): void {
    if (this.downSince === undefined) return;
    if (this.warnedAt !== undefined) {
      this.logger.log(
        `EchoMQ reached Redis at ${this.target} (unreachable for ${seconds(this.downForMs())})`,
      );
    }
    this.downSince = undefined;
    this.warnedAt = undefined;
    this.lastError = undefined;
    this.changed();
  }

  private disconnected(): void {
    if (this.downSince !== undefined) return;
    this.downSince = this.clock();
    this.changed();
  }

  private failed(error: Error): void {
    this.lastError = reasonOf(error);
    this.disconnected(); // an error on a live socket comes before its 'close'
    const now = this.clock();
    if (this.warnedAt === undefined) {
      this.warnedAt = now;
      this.logger.warn(
        `EchoMQ cannot reach Redis at ${this.target} (${this.lastError}); reconnecting in the background. ` +
          'Until it is back, enqueue fails with REDIS_UNAVAILABLE and workers wait.',
      );
    } else if (now - this.warnedAt >= UNREACHABLE_REMINDER_MS) {
      this.warnedAt = now;
      this.logger.warn(
        `EchoMQ still cannot reach Redis at ${this.target}, for ${seconds(this.downForMs())} now (${this.lastError})`,
      );
    }
  }

  private changed(): void {
    for (const watcher of [...this.watchers]) watcher();
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/**
 * A connection error in words. Node's happy-eyeballs connect (a name with an IPv4 and an IPv6
 * address) fails with an AggregateError whose message is empty; a cluster's names its last node's.
 */
function reasonOf(error: Error): string {
  const detail = error as Error & { code?: string; errors?: unknown[]; lastNodeError?: Error };
  if (detail.lastNodeError?.message) return `${error.message} ${detail.lastNodeError.message}`;
  if (error.message) return error.message;
  const first = detail.errors?.[0];
  if (first instanceof Error && first.message) return first.message;
  return detail.code ?? error.name;
}
