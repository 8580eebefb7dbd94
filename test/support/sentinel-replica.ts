import { RedisServer } from './redis-server';
import { briefly, HOST, pollUntil } from './sentinel-probe';

/**
 * Every node gets these: a full sync starts at once (the default waits 5 s for more replicas to
 * join a diskless sync), and a replica that lost its master tries again every second.
 */
export const NODE_ARGS: readonly string[] = [
  '--repl-diskless-sync-delay',
  '0',
  '--repl-ping-replica-period',
  '1',
];

/**
 * A redis-server replicating the master on `masterPort` (--replicaof), resolved once its
 * first sync is done. On `port` if given (a node coming back), else a free one.
 */
export async function startReplica(masterPort: number, port?: number): Promise<RedisServer> {
  const replica = await RedisServer.start({
    port,
    args: [...NODE_ARGS, '--replicaof', HOST, String(masterPort)],
  });
  try {
    await linkUp(replica.port);
  } catch (error) {
    await replica.destroy();
    throw error;
  }
  return replica;
}

/** Waits until the replica on `port` has finished its sync with its master. */
export async function linkUp(port: number): Promise<void> {
  await pollUntil(
    () =>
      briefly(port, async (client) => {
        const info = await client.info('replication');
        return /master_link_status:up/.test(info) && !/master_sync_in_progress:1/.test(info);
      }),
    () => `The replica on port ${port} did not sync in time`,
  );
}

/** Stops or resumes a process (SIGSTOP / SIGCONT): a replica that stops acknowledging. */
export function signalNode(node: RedisServer, signal: 'SIGSTOP' | 'SIGCONT'): void {
  if (node.pid !== undefined) process.kill(node.pid, signal);
}
