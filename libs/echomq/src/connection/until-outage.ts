import type { RedisConnections } from './redis-connections';

/**
 * Runs `wait`, cut short with RedisUnavailableError once Redis is in an outage (at once when it
 * is in one now). For waits no deadline of their own bounds: a cluster client queues commands
 * while it has no node, and a node lease waits for Redis to confirm it.
 */
export async function untilOutage<T>(
  connections: RedisConnections,
  wait: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const done = new AbortController();
  try {
    return await Promise.race([wait(done.signal), connections.reachability.outage(done.signal)]);
  } finally {
    done.abort();
  }
}
