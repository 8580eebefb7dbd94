import type { Redis } from 'ioredis';
import { queueKeys } from '@app/echomq/internal';

/**
 * Deletes every key of one queue (and its test markers). Only the suites that leave large
 * backlogs behind call it, so the shared test Redis does not carry 100,000 rows for the
 * rest of the run. Queue names never contain glob characters, so MATCH is exact.
 */
export async function dropQueue(redis: Redis, queue: string): Promise<void> {
  for (const pattern of [`${queueKeys(queue).base}*`, `flowprobe:${queue}:*`]) {
    let cursor = '0';
    do {
      const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 5_000);
      cursor = next;
      if (found.length > 0) await redis.unlink(...found);
    } while (cursor !== '0');
  }
}
