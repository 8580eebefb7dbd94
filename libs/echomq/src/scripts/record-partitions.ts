import { isValidQueueName, partitionRegistryFields, partitionRegistryKey } from '../keyspace';
import type { RedisClient, ScriptedClient } from './registry';
import { installScripts } from './registry';

/** A queue's partition layout as the registry holds it. */
export interface RecordedPartitions {
  /** The count last declared: what producers that declare none spread new jobs over. */
  readonly count: number;
  /** The most partitions the queue ever had: what workers serve, so dropped partitions drain. */
  readonly most: number;
}

/**
 * Records that `queue` is declared with `count` partitions (1: unpartitioned) and returns the
 * most it ever had. Idempotent: a repeat after a lost reply writes the same fields again. A
 * count of 1 for a queue the registry has no entry for writes nothing (see the script).
 */
export async function recordPartitions(
  redis: RedisClient,
  prefix: string,
  queue: string,
  count: number,
): Promise<number> {
  const client: ScriptedClient = installScripts(redis);
  return Number(await client.emqRecordPartitions(partitionRegistryKey(prefix), queue, count));
}

/**
 * Removes `queue`'s entry from the registry (one HDEL of its two fields): every physical queue
 * of it was obliterated, so a queue created again under its name starts unpartitioned.
 * Idempotent.
 */
export async function forgetPartitions(redis: RedisClient, prefix: string, queue: string): Promise<void> {
  const fields = partitionRegistryFields(queue);
  await redis.hdel(partitionRegistryKey(prefix), fields.count, fields.most);
}

/** Every queue's recorded layout under `prefix`, by queue name (one HGETALL). */
export async function readRecordedPartitions(
  redis: RedisClient,
  prefix: string,
): Promise<Map<string, RecordedPartitions>> {
  const raw = await redis.hgetall(partitionRegistryKey(prefix));
  const layouts = new Map<string, RecordedPartitions>();
  for (const [field, value] of Object.entries(raw)) {
    // (a `q#max` field, or anything that is no queue's name)
    if (!isValidQueueName(field)) continue;
    const count = Number(value);
    const most = Math.max(count, Number(raw[partitionRegistryFields(field).most] ?? count));
    if (Number.isInteger(count) && count >= 1) layouts.set(field, { count, most });
  }
  return layouts;
}
