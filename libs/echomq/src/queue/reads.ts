import { describeValue, InvalidArgumentError } from '../errors';
import type { JobId } from '../ids';
import {
  assertJobId,
  assertLaneName,
  assertPriority,
  STATE_SETS,
  type QueueKeys,
  type StateSet,
} from '../keyspace';
import { optionsOf } from '../option-checks';
import type { RedisClient, ScriptContext } from '../scripts';
import { browsePending, countStateSets } from '../scripts/pending-reads';

export type QueueCounts = Record<StateSet, number>;

export interface BrowseOptions {
  /** At most this many ids; default 50, at most 1000. */
  readonly limit?: number;
  /** pending / dead only: continue after this id (exclusive), for paging newest-first. */
  readonly after?: string;
  /** pending only: this lane's jobs (else every lane's, merged newest-first). */
  readonly lane?: string;
  /** pending only: the jobs at this priority level (0 to 9), of the lane when one is given. */
  readonly priority?: number;
}

export const BROWSE_MAX = 1000;
const BROWSE_DEFAULT = 50;
const BROWSE_OPTION_KEYS = ['limit', 'after', 'lane', 'priority'] as const;

export function isStateSet(value: unknown): value is StateSet {
  return typeof value === 'string' && (STATE_SETS as readonly string[]).includes(value);
}

/**
 * Ids in one state, with no second index: pending and dead are ordered by member,
 * and members are ids whose bytes are mint order, so newest-first is a reverse
 * lexical range. Active and schedule come soonest deadline / run-at first.
 * Options other than a plain object of these fields throw InvalidArgumentError before
 * anything is sent, and a field set to null is refused by its own rule: only undefined
 * means "the default".
 */
export async function browseIds(
  ctx: ScriptContext,
  state: StateSet,
  options: BrowseOptions = {},
): Promise<JobId[]> {
  const { redis, keys } = ctx;
  const { checked, limit } = checkBrowse(state, options);
  if (state === 'pending') return browsePending(ctx, { ...pendingScope(checked), limit, ...after(checked) });
  if (state === 'dead') {
    const from = checked.after === undefined ? '+' : `(${assertJobId(checked.after)}`;
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
  return (await redis.zrange(keys.set(state), 0, limit - 1)) as JobId[];
}

/**
 * Checks a browse's state and options (InvalidArgumentError, before anything is sent) and
 * returns them with the page size filled in.
 */
export function checkBrowse(
  state: unknown,
  options: BrowseOptions = {},
): { checked: BrowseOptions; limit: number } {
  if (!isStateSet(state)) {
    throw new InvalidArgumentError(`state must be one of ${STATE_SETS.join(', ')}`);
  }
  const checked = optionsOf(options, BROWSE_OPTION_KEYS, 'browse options');
  const limit = checked.limit === undefined ? BROWSE_DEFAULT : checked.limit;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > BROWSE_MAX) {
    throw new InvalidArgumentError(
      `limit must be an integer from 1 to ${BROWSE_MAX}, got ${describeValue(limit)}`,
    );
  }
  if (state === 'pending') {
    pendingScope(checked);
    after(checked);
    return { checked, limit };
  }
  if (checked.lane !== undefined || checked.priority !== undefined) {
    throw new InvalidArgumentError('lane and priority browse pending only');
  }
  if (state === 'dead') {
    after(checked);
    return { checked, limit };
  }
  if (checked.after !== undefined) {
    throw new InvalidArgumentError('after pages pending and dead only');
  }
  return { checked, limit };
}

/** The lane and/or level a pending browse is scoped to, checked before anything is sent. */
function pendingScope(options: BrowseOptions): { lane?: string; priority?: number } {
  return {
    ...(options.lane === undefined ? {} : { lane: assertLaneName(options.lane) }),
    ...(options.priority === undefined ? {} : { priority: assertPriority(options.priority) }),
  };
}

function after(options: BrowseOptions): { after?: string } {
  return options.after === undefined ? {} : { after: assertJobId(options.after) };
}

/** The four depths, read in one script, so a job moving between sets is counted exactly once. */
export async function countStates(ctx: ScriptContext): Promise<QueueCounts> {
  return countStateSets(ctx);
}

/** Transition counters of one queue, as numbers. */
export async function readMetrics(redis: RedisClient, keys: QueueKeys): Promise<Record<string, number>> {
  const raw = await redis.hgetall(keys.metrics);
  return Object.fromEntries(Object.entries(raw).map(([field, value]) => [field, Number(value)]));
}
