import { InvalidArgumentError } from '../errors';
import type { JobId } from '../ids';
import { assertJobId, STATE_SETS, type QueueKeys, type StateSet } from '../keyspace';
import type { RedisClient } from '../scripts';
import { execAll } from '../connection/exec-all';

export type QueueCounts = Record<StateSet, number>;

export interface BrowseOptions {
  /** At most this many ids; default 50, at most 1000. */
  readonly limit?: number;
  /** pending / dead only: continue after this id (exclusive), for paging newest-first. */
  readonly after?: string;
}

export const BROWSE_MAX = 1000;

export function isStateSet(value: unknown): value is StateSet {
  return typeof value === 'string' && (STATE_SETS as readonly string[]).includes(value);
}

/**
 * Ids in one state, with no second index: pending and dead are ordered by member,
 * and members are ids whose bytes are mint order, so newest-first is a reverse
 * lexical range. Active and schedule come soonest deadline / run-at first.
 */
export async function browseIds(
  redis: RedisClient,
  keys: QueueKeys,
  state: StateSet,
  options: BrowseOptions = {},
): Promise<JobId[]> {
  if (!isStateSet(state)) {
    throw new InvalidArgumentError(`state must be one of ${STATE_SETS.join(', ')}`);
  }
  const limit = options.limit ?? 50;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > BROWSE_MAX) {
    throw new InvalidArgumentError(`limit must be an integer from 1 to ${BROWSE_MAX}`);
  }
  if (state === 'pending' || state === 'dead') {
    const from = options.after === undefined ? '+' : `(${assertJobId(options.after)}`;
    return (await redis.call(
      'ZRANGE',
      keys.set(state),
      from,
      '-',
      'BYLEX',
      'REV',
      'LIMIT',
      0,
      limit,
    )) as JobId[];
  }
  if (options.after !== undefined) {
    throw new InvalidArgumentError('after pages pending and dead only');
  }
  return (await redis.zrange(keys.set(state), 0, limit - 1)) as JobId[];
}

/** The four depths, read in one MULTI so a job moving between sets is counted exactly once. */
export async function countStates(redis: RedisClient, keys: QueueKeys): Promise<QueueCounts> {
  const replies = await execAll(
    redis.multi().zcard(keys.pending).zcard(keys.active).zcard(keys.schedule).zcard(keys.dead),
    `The counts of queue ${keys.queue}`,
  );
  const values = replies.map(Number);
  return { pending: values[0], active: values[1], schedule: values[2], dead: values[3] };
}

/** Transition counters of one queue, as numbers. */
export async function readMetrics(redis: RedisClient, keys: QueueKeys): Promise<Record<string, number>> {
  const raw = await redis.hgetall(keys.metrics);
  return Object.fromEntries(Object.entries(raw).map(([field, value]) => [field, Number(value)]));
}
