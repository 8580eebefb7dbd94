import type { Redis } from 'ioredis';
import { queueKeys } from '@app/echomq/internal';
import { events } from '../../support/assertions';

/**
 * Every job start of a queue as the server recorded it: one entry per claimed job, at the ms
 * part of its 'claimed' event's stream id (the Redis clock when the claim ran), ascending.
 */
export async function claimTimes(redis: Redis, queue: string): Promise<number[]> {
  const times: number[] = [];
  for (const { streamId, fields } of await events(redis, queueKeys(queue))) {
    if (fields.type !== 'claimed') continue;
    const at = Number(streamId.split('-')[0]);
    for (let n = fields.ids.split(',').length; n > 0; n--) times.push(at);
  }
  return times.sort((a, b) => a - b);
}

/** The most claims in any half-open span [t, t + windowMs) that starts at a claim time t. */
export function busiestWindow(times: readonly number[], windowMs: number): number {
  let most = 0;
  let end = 0;
  for (let start = 0; start < times.length; start++) {
    while (end < times.length && times[end] < times[start] + windowMs) end++;
    most = Math.max(most, end - start);
  }
  return most;
}

/** How many 'claimed' events (claim calls that got at least one job) the queue's stream holds. */
export async function claimsThatGotJobs(redis: Redis, queue: string): Promise<number> {
  return (await events(redis, queueKeys(queue))).filter((event) => event.fields.type === 'claimed').length;
}

/**
 * How many claim calls ran against the queue with their server time within [fromMs, toMs],
 * whether they got jobs or not (a limited claim emits no event). Each claim call records its
 * reply under the queue's reply:<request id> for the replay window, and a claim's reply is its
 * lease deadline (server now + leaseMs) - a number no other transition's reply looks like
 * (they record flags, states or JSON) - so the deadlines inside [fromMs, toMs] + leaseMs count
 * the claim calls of that span exactly.
 */
export async function claimCalls(
  redis: Redis,
  queue: string,
  leaseMs: number,
  fromMs: number,
  toMs: number,
): Promise<number> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(
      cursor,
      'MATCH',
      `${queueKeys(queue).base}reply:*`,
      'COUNT',
      1_000,
    );
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  if (keys.length === 0) return 0;
  const replies = await redis.mget(...keys);
  return replies.filter((reply) => {
    if (reply === null || !/^\d+$/.test(reply)) return false;
    const ranAt = Number(reply) - leaseMs;
    return ranAt >= fromMs && ranAt <= toMs;
  }).length;
}
