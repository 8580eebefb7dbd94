import { Redis } from 'ioredis';

/** A Redis address as the sentinels report it. */
export interface Address {
  readonly host: string;
  readonly port: number;
}

/** Every process of a test deployment listens on loopback. */
export const HOST = '127.0.0.1';

/** How long setup and failover steps may take before the harness gives up on them. */
export const STEP_TIMEOUT_MS = 30_000;

/** How often a step's condition is asked again. */
export const POLL_MS = 50;

export function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Asks `holds` every `intervalMs` until it is true; throws `failure()` once `timeoutMs` has
 * passed. A `holds` that throws counts as false (a process not up yet).
 */
export async function pollUntil(
  holds: () => Promise<boolean>,
  failure: () => string,
  timeoutMs = STEP_TIMEOUT_MS,
  intervalMs = POLL_MS,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await holds().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(failure());
    await pause(intervalMs);
  }
}

/** Runs `work` on a short-lived client of the sentinel or node on `port` (no reconnects, no timers left). */
export async function briefly<T>(port: number, work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 1_000,
    commandTimeout: 2_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await work(client);
  } finally {
    client.disconnect();
  }
}

/** The role a data node reports (INFO replication), or 'down'. */
export async function roleOf(port: number): Promise<string> {
  return briefly(port, async (client) => {
    const info = await client.info('replication');
    return /role:(\w+)/.exec(info)?.[1] ?? 'unknown';
  }).catch(() => 'down');
}

/** A flat [name, value, name, value, ...] reply as an object. */
export function fieldsOf(flat: readonly string[]): Record<string, string> {
  const entry: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) entry[flat[i]] = flat[i + 1];
  return entry;
}
