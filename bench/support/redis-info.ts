import type { Redis } from 'ioredis';

/** The INFO fields the cost figure reads, at one instant. */
export interface RedisSnapshot {
  /** used_memory, bytes. */
  readonly usedMemory: number;
  /** used_cpu_sys + used_cpu_user, seconds. */
  readonly cpuSeconds: number;
  /** Sum of calls over INFO commandstats, without INFO itself (the benchmark's own probe). */
  readonly commandCalls: number;
}

export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0 && !line.startsWith('#')) fields.set(line.slice(0, at), line.slice(at + 1));
  }
  return fields;
}

export async function snapshot(admin: Redis): Promise<RedisSnapshot> {
  const fields = parseInfo(await admin.info('memory', 'cpu', 'commandstats'));
  let commandCalls = 0;
  for (const [key, value] of fields) {
    if (!key.startsWith('cmdstat_') || key === 'cmdstat_info') continue;
    const calls = /(?:^|,)calls=(\d+)/.exec(value);
    if (calls) commandCalls += Number(calls[1]);
  }
  return {
    usedMemory: Number(fields.get('used_memory')),
    cpuSeconds: Number(fields.get('used_cpu_sys')) + Number(fields.get('used_cpu_user')),
    commandCalls,
  };
}

export async function redisVersion(admin: Redis): Promise<string> {
  return parseInfo(await admin.info('server')).get('redis_version') ?? 'unknown';
}
