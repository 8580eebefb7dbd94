import { Cluster } from 'ioredis';
import { isPhysicalQueueName, queueKeys } from '../keyspace';
import type { RedisClient } from '../scripts';
import { scanKeys } from './key-scan';

/**
 * The physical queues under a key prefix that have a format key (`<prefix>:{q}:format`): queues,
 * and each partition of a partitioned queue by its own name (`emails#2`), found by one
 * SCAN pass over every master: the registry (`<prefix>:queues`) alone misses queues the reapers
 * pruned as idle, which is what a queue holding only orphan rows looks like, and every queue
 * records its format on first use (removed only by obliterate). A key counts only when the
 * keyspace module composes exactly that format key for the name read off it, so a key written
 * under a near name (an idempotency key holding `{x}:format`) is never taken for a queue.
 * Cost: one walk of each master's whole keyspace (MATCH filters what comes back, not what is
 * walked). Returns the names sorted.
 */
export async function discoverQueues(redis: RedisClient, prefix: string): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const head = `${prefix}:{`;
  const tail = '}:format';
  const found = new Set<string>();
  for await (const page of scanKeys(nodes, `${head}*${tail}`)) {
    for (const key of page) {
      const name = key.slice(head.length, key.length - tail.length);
      if (isPhysicalQueueName(name) && queueKeys(name, prefix).format === key) found.add(name);
    }
  }
  return [...found].sort();
}
