import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { briefly, fieldsOf, HOST, POLL_MS, pollUntil } from './sentinel-probe';

/** What one redis-sentinel process watches, and how fast it decides. */
export interface SentinelConfig {
  /** The folder its config and log files go in (Sentinel rewrites its config: it must be writable). */
  readonly dir: string;
  readonly port: number;
  readonly masterName: string;
  readonly masterPort: number;
  readonly quorum: number;
  /** How long a master must be silent before this sentinel thinks it down. */
  readonly downAfterMs: number;
  /** Sentinel's failover-timeout (also the wait before it retries a failed election, doubled). */
  readonly failoverTimeoutMs: number;
}

/** Starts one redis-sentinel on loopback with its own config file; stop it with stopSentinel. */
export function startSentinel(config: SentinelConfig): ChildProcess {
  const { dir, port, masterName } = config;
  const file = join(dir, `sentinel-${port}.conf`);
  writeFileSync(
    file,
    [
      `port ${port}`,
      `bind ${HOST}`,
      `dir ${dir}`,
      `logfile ${join(dir, `sentinel-${port}.log`)}`,
      `sentinel monitor ${masterName} ${HOST} ${config.masterPort} ${config.quorum}`,
      `sentinel down-after-milliseconds ${masterName} ${config.downAfterMs}`,
      `sentinel failover-timeout ${masterName} ${config.failoverTimeoutMs}`,
      `sentinel parallel-syncs ${masterName} 1`,
      '',
    ].join('\n'),
  );
  const child = spawn('redis-sentinel', [file], { stdio: 'ignore' });
  child.on('error', () => undefined); // reported by untilSentinelReady, which then times out
  return child;
}

/** SIGKILLs a sentinel and waits for it to exit. */
export async function stopSentinel(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/**
 * Waits until the sentinel on `port` sees the quorum and its peers (CKQUORUM) and lists
 * `replicas` replicas: from then on a failover can be agreed and has a replica to promote.
 */
export async function untilSentinelReady(
  port: number,
  masterName: string,
  replicas: number,
  peers: number,
  timeoutMs?: number,
): Promise<void> {
  await pollUntil(
    () =>
      briefly(port, async (client) => {
        await client.call('SENTINEL', 'ckquorum', masterName);
        const known = (await client.call('SENTINEL', 'replicas', masterName)) as unknown[];
        const others = (await client.call('SENTINEL', 'sentinels', masterName)) as unknown[];
        return known.length >= replicas && others.length >= peers;
      }),
    () => `Sentinel on port ${port} did not see its group in time`,
    timeoutMs,
    POLL_MS * 4,
  );
}

/** Waits until the sentinel on `port` lists the node on `replicaPort` as a healthy replica (one it could promote). */
export async function untilSentinelSeesReplica(
  port: number,
  masterName: string,
  replicaPort: number,
  timeoutMs?: number,
): Promise<void> {
  await pollUntil(
    () =>
      briefly(port, async (client) => {
        const replicas = (await client.call('SENTINEL', 'replicas', masterName)) as string[][];
        return replicas.some((fields) => {
          const entry = fieldsOf(fields);
          return (
            Number(entry.port) === replicaPort &&
            entry.flags === 'slave' &&
            entry['master-link-status'] === 'ok'
          );
        });
      }),
    () => `Sentinel on port ${port} did not see replica ${replicaPort} in time`,
    timeoutMs,
    POLL_MS * 4,
  );
}
