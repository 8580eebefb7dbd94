import type { QueueKeys } from '../keyspace';
import type { RedisClient } from '../scripts';
import { compareStreamIds } from './queue-event';

/** How far back a new reader starts, so a job that finished just before the first wait is still seen. */
export const START_LOOKBACK_MS = 60_000;

/**
 * Where a new reader starts: START_LOOKBACK_MS back on the Redis clock, the clock that
 * stamps the stream's ids. (The client's clock may be minutes off; a reader started
 * from it would skip every entry, or read far too much.) EXISTS on the events key pins
 * the pipeline to the node that owns the queue's slot, so in a cluster TIME is that
 * node's clock.
 */
export async function startPosition(client: RedisClient, keys: QueueKeys): Promise<string> {
  const replies = await client.pipeline().exists(keys.events).time().exec();
  const [error, time] = replies?.[1] ?? [new Error('TIME: no reply')];
  if (error) throw error;
  const [seconds, micros] = time as [string, string];
  const nowMs = Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
  return `${Math.max(0, nowMs - START_LOOKBACK_MS)}-0`;
}

/** Id of the newest entry, or '0-0' for an empty stream. */
export async function streamTail(client: RedisClient, keys: QueueKeys): Promise<string> {
  const last = await client.xrevrange(keys.events, '+', '-', 'COUNT', 1);
  return last.length > 0 ? last[0][0] : '0-0';
}

/** Id of the oldest entry still on the stream, or undefined when it is empty. */
export async function streamHead(client: RedisClient, keys: QueueKeys): Promise<string | undefined> {
  const first = await client.xrange(keys.events, '-', '+', 'COUNT', 1);
  return first.length > 0 ? first[0][0] : undefined;
}

/**
 * The gap rule. `cursor` is an entry the reader delivered before its last read. The
 * stream is trimmed only from its head (EchoMQ never deletes single entries), so if
 * anything after the cursor was trimmed before the reader got to it, the cursor entry
 * itself was trimmed first: the head is now past it. The converse is not exact (the
 * cursor may have been trimmed just after the read), so a reader at the trim edge sees
 * false gaps, which only cost its waits one extra read; it never misses a real one.
 */
export function trimmedPast(cursor: string, head: string | undefined): boolean {
  return head === undefined || compareStreamIds(head, cursor) > 0;
}
