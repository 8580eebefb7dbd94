import type { RedisConnections } from '../connection/redis-connections';

/** Whether Redis answered, and if not, what to tell the operator. */
export type RedisProbe =
  | { readonly reachable: true; readonly target: string }
  | { readonly reachable: false; readonly target: string; readonly message: string };

/**
 * Is Redis reachable through the very connection EchoMQ uses? While that connection is down
 * and its last attempt failed (refused, reset, unresolvable), no: at once, naming the target and
 * the error. Otherwise (up, or still connecting at boot) it PINGs: a socket can look up and be
 * dead, so a PING without a PONG within `timeoutMs` is a no too.
 */
export async function probeRedis(connections: RedisConnections, timeoutMs: number): Promise<RedisProbe> {
  const { reachability } = connections;
  const target = reachability.target;
  const unreachable = (): RedisProbe => ({
    reachable: false,
    target,
    message: `Redis at ${target} is unreachable (${reachability.reason ?? 'not connected yet'})`,
  });
  if (!reachability.reachable && reachability.reason !== undefined) return unreachable();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no PONG within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([connections.client.ping(), timeout]);
    return { reachable: true, target };
  } catch (error) {
    if (!reachability.reachable) return unreachable();
    return { reachable: false, target, message: `Redis at ${target}: ${(error as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}
