import type { DiscoveryService } from '@nestjs/core';
import { ModuleImportedTwiceError } from '../errors';
import { RedisConnections } from '../connection/redis-connections';

/**
 * Each forRoot import brings its own explorer, and each would serve every processor of
 * the application (twice the concurrency, twice the connections), so one application
 * holds one root: a second is refused at boot, naming the fix.
 */
export async function refuseSecondRoot(discovery: DiscoveryService, explorer: unknown): Promise<void> {
  const providers = discovery.getProviders();
  const roots = providers.filter((wrapper) => wrapper.metatype === explorer).length;
  if (roots <= 1) return;
  // Init stops at the first refusal and Nest runs no shutdown hooks: close every root's
  // connections (and node lease), not only this one's, or a process that handles the
  // error keeps the others' sockets and timers alive.
  const connections = providers
    .map((wrapper) => wrapper.instance as unknown)
    .filter((instance): instance is RedisConnections => instance instanceof RedisConnections);
  await Promise.all(connections.map((each) => each.onApplicationShutdown()));
  throw new ModuleImportedTwiceError(roots);
}
