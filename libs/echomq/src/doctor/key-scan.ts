import { Cluster, type Redis } from 'ioredis';
import { isJobId } from '../ids';
import { DEFAULT_LANE, isValidLaneName, PRIORITY_MAX, type QueueKeys } from '../keyspace';
import type { RedisClient } from '../scripts';

/** Keys asked for per SCAN call: bounded work per round trip, whatever the size of the database. */
export const SCAN_COUNT = 1_000;

/** A key of one queue that the doctor checks, as the keyspace module names it. */
export type QueueKey =
  | { readonly kind: 'row'; readonly id: string }
  | { readonly kind: 'lane-pending'; readonly lane: string; readonly level: number }
  | { readonly kind: 'lane-settings'; readonly lane: string }
  | { readonly kind: 'other' };

/**
 * The servers that hold a queue's keys: on Redis Cluster only the master that owns the queue's
 * slot (every key of a queue carries its hashtag), or every master while the client does not yet
 * know the slot map (harmless: the others hold none of them); else the one server.
 */
export async function queueNodes(redis: RedisClient, keys: QueueKeys): Promise<Redis[]> {
  if (!(redis instanceof Cluster)) return [redis];
  const masters = redis.nodes('master');
  const slot = Number(await redis.cluster('KEYSLOT', keys.base));
  const owner = redis.slots[slot]?.[0];
  const node = masters.find((master) => `${master.options.host}:${master.options.port}` === owner);
  return node ? [node] : masters;
}

/**
 * Keys matching `pattern`, a SCAN page at a time (never KEYS), on the given servers. MATCH only
 * filters what a call returns: each call still walks COUNT slots of the server's whole keyspace,
 * so one pass costs about (keys on the server) / SCAN_COUNT calls, whatever the pattern.
 */
export async function* scanKeys(nodes: readonly Redis[], pattern: string): AsyncGenerator<string[]> {
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      cursor = next;
      if (found.length > 0) yield found;
    } while (cursor !== '0');
  }
}

/**
 * A queue's keys that match `suffix` (a glob after its base, `<prefix>:{q}:`), scanned on the
 * server that holds them. The base ends with the queue's hashtag, and neither a prefix nor a
 * queue name holds a glob character, so no other queue's key matches.
 */
export async function* scanQueueKeys(
  redis: RedisClient,
  keys: QueueKeys,
  suffix = '*',
): AsyncGenerator<string[]> {
  yield* scanKeys(await queueNodes(redis, keys), `${keys.base}${suffix}`);
}

/** Whether any key of the queue exists: a SCAN that stops at the first one (one pass at worst). */
export async function queueHasKeys(redis: RedisClient, keys: QueueKeys): Promise<boolean> {
  for await (const page of scanQueueKeys(redis, keys)) if (page.length > 0) return true;
  return false;
}

/**
 * What a key is, read back through the keyspace module: a key counts as a row, a lane's pending
 * set or a lane's settings only when the builder composes exactly that key for the id or lane
 * read off it, so a key written by hand under a near name is never taken for one.
 */
export function classifyKey(keys: QueueKeys, key: string): QueueKey {
  if (key.startsWith(keys.jobPrefix)) {
    const id = key.slice(keys.jobPrefix.length);
    return isJobId(id) && keys.job(id) === key ? { kind: 'row', id } : { kind: 'other' };
  }
  const lanePending = `${keys.pending}:`;
  if (key.startsWith(lanePending)) {
    const match = /^([0-9]):(.+)$/.exec(key.slice(lanePending.length));
    if (!match) return { kind: 'other' };
    const level = Number(match[1]);
    const lane = match[2];
    if (level > PRIORITY_MAX || !isValidLaneName(lane) || keys.pendingOf(lane, level) !== key) {
      return { kind: 'other' };
    }
    return { kind: 'lane-pending', lane, level };
  }
  const settingsPrefix = keys.laneSettings(DEFAULT_LANE).slice(0, -DEFAULT_LANE.length);
  if (key.startsWith(settingsPrefix)) {
    const lane = key.slice(settingsPrefix.length);
    return isValidLaneName(lane) && keys.laneSettings(lane) === key
      ? { kind: 'lane-settings', lane }
      : { kind: 'other' };
  }
  return { kind: 'other' };
}

/** Members of a sorted set, a ZSCAN page at a time. */
export async function* scanSortedSet(
  redis: RedisClient,
  key: string,
  count: number,
): AsyncGenerator<string[]> {
  let cursor = '0';
  do {
    const [next, flat] = await redis.zscan(key, cursor, 'COUNT', count);
    cursor = next;
    const members: string[] = [];
    for (let i = 0; i < flat.length; i += 2) members.push(flat[i]);
    if (members.length > 0) yield members;
  } while (cursor !== '0');
}

/** Members of a set, an SSCAN page at a time. */
export async function* scanSet(redis: RedisClient, key: string, count: number): AsyncGenerator<string[]> {
  let cursor = '0';
  do {
    const [next, members] = await redis.sscan(key, cursor, 'COUNT', count);
    cursor = next;
    if (members.length > 0) yield members;
  } while (cursor !== '0');
}

/** Field/value pairs of a hash, an HSCAN page at a time. */
export async function* scanHash(
  redis: RedisClient,
  key: string,
  count: number,
): AsyncGenerator<[string, string][]> {
  let cursor = '0';
  do {
    const [next, flat] = await redis.hscan(key, cursor, 'COUNT', count);
    cursor = next;
    const pairs: [string, string][] = [];
    for (let i = 0; i < flat.length; i += 2) pairs.push([flat[i], flat[i + 1]]);
    if (pairs.length > 0) yield pairs;
  } while (cursor !== '0');
}

/** Items in batches of at most `size`, as they come from pages of any size. */
export async function* inBatches<T>(pages: AsyncIterable<T[]>, size: number): AsyncGenerator<T[]> {
  let batch: T[] = [];
  for await (const page of pages) {
    for (const item of page) {
      batch.push(item);
      if (batch.length === size) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}

/** A list in batches of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let at = 0; at < items.length; at += size) out.push(items.slice(at, at + size));
  return out;
}
