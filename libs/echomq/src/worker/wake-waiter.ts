import { BlockingConnection } from '../connection/blocking-connection';
import type { RedisConnections } from '../connection/redis-connections';

/**
 * Blocks an idle claim loop on the queue's wake list (BLPOP) until enqueue, a
 * retry or a release pushes a token, or the timeout passes, on a dedicated
 * connection with a watchdog (see BlockingConnection).
 */
export class WakeWaiter {
  private readonly connection: BlockingConnection;

  constructor(
    connections: RedisConnections,
    private readonly key: string,
  ) {
    this.connection = new BlockingConnection(connections);
  }

  /** Resolves on a wake token, the timeout, or interrupt(); rejects on connection errors. */
  async wait(timeoutMs: number): Promise<void> {
    const seconds = Math.max(0.01, timeoutMs / 1000).toFixed(3);
    await this.connection.run(timeoutMs, (client) => client.blpop(this.key, seconds));
  }

  /** Ends a wait in progress at once (its BLPOP fails with a closed connection). */
  interrupt(): void {
    this.connection.reset();
  }
}
