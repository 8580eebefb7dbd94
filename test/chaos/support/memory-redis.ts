import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisServer } from '../../support/redis-server';

/** A redis-server of the scenario's own, with a small maxmemory and noeviction: it fills up, and then refuses growth. */
export function startSmallRedis(maxmemoryBytes: number): Promise<RedisServer> {
  return RedisServer.start({
    args: ['--maxmemory', String(maxmemoryBytes), '--maxmemory-policy', 'noeviction'],
  });
}

/** What INFO memory says, in bytes. */
export interface MemoryFigures {
  readonly used: number;
  readonly peak: number;
}

export async function memoryFigures(admin: Redis): Promise<MemoryFigures> {
  const info = await admin.info('memory');
  const field = (name: string): number => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? NaN);
  return { used: field('used_memory'), peak: field('used_memory_peak') };
}

/**
 * Waits until used_memory is below `maxmemory` again, polling INFO every 100 ms for at most
 * `timeoutMs` (no event says it); `afterMs` is how long that took, undefined if it never was.
 */
export async function roomAgain(
  admin: Redis,
  maxmemory: number,
  timeoutMs: number,
): Promise<{ afterMs?: number }> {
  const started = Date.now();
  for (;;) {
    if ((await memoryFigures(admin)).used < maxmemory) return { afterMs: Date.now() - started };
    if (Date.now() - started > timeoutMs) return {};
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Lines of the children's logs (child-*.log in the scenario's folder) that contain `text`. */
export function childLogLines(dir: string, text: string): string[] {
  const lines: string[] = [];
  for (const file of readdirSync(dir).filter((name) => name.startsWith('child-') && name.endsWith('.log'))) {
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n'))
      if (line.includes(text)) lines.push(line);
  }
  return lines;
}
