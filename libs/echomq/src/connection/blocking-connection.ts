import type { RedisClient } from '../scripts';
import { reconnectDelay, type ReconnectDelay, type RedisConnections } from './redis-connections';

/** Extra time past a blocking command's own timeout before it is presumed stuck. */
const WATCHDOG_GRACE_MS = 2_000;
const STUCK = Symbol('stuck');

/**
 * One dedicated connection for blocking reads (BLPOP, XREAD BLOCK), opened on first
 * use. A read that fails, or outlives its timeout by the grace period (a socket that
 * died silently, a Redis that restarted), drops the connection, and the next read
 * opens a fresh one: a reader that looks alive always reads again. Blocks are long (an
 * idle worker should cost Redis next to nothing), so a read also ends, failed, when the
 * command connection closes: whatever silenced or lost that one is noticed here as soon.
 */
export class BlockingConnection {
  private client?: RedisClient;
  /** Fails the read in progress (set while one runs). */
  private endRead?: (error: Error) => void;

  constructor(
    private readonly connections: RedisConnections,
    /** Its client's reconnect schedule (unless the application configured one). */
    private readonly retry: ReconnectDelay = reconnectDelay,
    /**
     * On a cluster, the one node (`host:port`, as the slot map names it) this connection talks
     * to, on a plain client; without it, a cluster client that routes by its own slot map.
     */
    private readonly node?: string,
  ) {}

  /**
   * Runs one blocking command that Redis answers within `blockMs`. Resolves with its
   * reply, or undefined when the watchdog gave up on it; rejects when it failed.
   */
  async run<T>(blockMs: number, command: (client: RedisClient) => Promise<T>): Promise<T | undefined> {
    const client = (this.client ??= this.connections.createBlockingClient(this.retry, this.node));
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<typeof STUCK>((resolve) => {
      timer = setTimeout(() => resolve(STUCK), blockMs + WATCHDOG_GRACE_MS);
    });
    // reset() ends the read at once, failed, with its own rejection rather than the client's: a
    // client still connecting may hold the read unsettled. So does the command connection
    // closing (silent, or Redis gone).
    const ended = new Promise<never>((_, reject) => (this.endRead = reject));
    const unwatch = this.connections.onCommandLost(() => this.reset());
    try {
      const outcome = await Promise.race([command(client), stuck, ended]);
      if (outcome !== STUCK) return outcome;
      this.reset();
      return undefined;
    } catch (error) {
      this.reset();
      throw error;
    } finally {
      clearTimeout(timer);
      unwatch();
      this.endRead = undefined;
    }
  }

  /** Closes the connection; a command in progress fails at once. */
  reset(): void {
    this.endRead?.(new Error('The blocking connection was closed: the read is given up'));
    this.endRead = undefined;
    if (this.client) {
      this.connections.release(this.client);
      this.client = undefined;
    }
  }
}
