import type { RedisConnections } from '../module/redis-connections';
import type { RedisClient } from '../scripts';

/** Extra time past the BLPOP timeout before a wait is presumed stuck on a dead connection. */
const WATCHDOG_GRACE_MS = 2_000;

/**
 * Blocks an idle claim loop on the queue's wake list (BLPOP) until enqueue, a
 * retry or a release pushes a token, or the timeout passes. It owns a dedicated
 * connection. A wait that outlives its timeout by the grace period (a connection
 * that died silently, a Redis that restarted) drops the connection and the next
 * wait opens a fresh one: a loop that looks alive always claims again.
 */
export class WakeWaiter {
  private client?: RedisClient;

  constructor(
    private readonly connections: RedisConnections,
    private readonly key: string,
  ) {}

  /** Resolves on a wake token, the timeout, or interrupt(); rejects on connection errors. */
  async wait(timeoutMs: number): Promise<void> {
    const client = (this.client ??= this.connections.createBlockingClient());
    const seconds = Math.max(0.01, timeoutMs / 1000).toFixed(3);
    let timer: NodeJS.Timeout | undefined;
    const stuck = new Promise<'stuck'>((resolve) => {
      timer = setTimeout(() => resolve('stuck'), timeoutMs + WATCHDOG_GRACE_MS);
    });
    try {
      const outcome = await Promise.race([client.blpop(this.key, seconds), stuck]);
      if (outcome === 'stuck') this.reset();
    } catch (error) {
      this.reset();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Ends a wait in progress at once (its BLPOP fails with a closed connection). */
  interrupt(): void {
    this.reset();
  }

  private reset(): void {
    if (this.client) {
      this.connections.release(this.client);
      this.client = undefined;
    }
  }
}
