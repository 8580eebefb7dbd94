import { InvalidArgumentError } from '../errors';
import type { JobId } from '../ids';
import { assertJobId, assertLaneName, assertPriority } from '../keyspace';
import type { ScriptContext } from './context';
import { PENDING_BROWSE_MAX } from './lua/pending-reads.lua';
import { runScript } from './run-script';

export { PENDING_BROWSE_MAX };

/** Which pending jobs a browse lists, and how many. */
export interface PendingBrowse {
  /** One lane's jobs (at every level, unless priority is given too); absent: every lane's. */
  readonly lane?: string;
  /** One level's jobs (0 to 9): of the lane when one is given, else of every lane. */
  readonly priority?: number;
  /** At most this many ids, 1 to PENDING_BROWSE_MAX. */
  readonly limit: number;
  /** Continue after this id (exclusive): the last id of the previous page. */
  readonly after?: string;
}

/**
 * Jobs waiting in the queue, over every lane and priority level: the plain pending set plus
 * each lane's set at each level (one script, so no job is seen twice or missed while it
 * moves). O(lanes with work) commands inside Redis.
 */
export async function countPending(ctx: ScriptContext): Promise<number> {
  return (await countStateSets(ctx)).pending;
}

/** The four depths, pending over every lane and level, read in one script at one instant. */
export async function countStateSets(
  ctx: ScriptContext,
): Promise<{ pending: number; active: number; schedule: number; dead: number }> {
  const reply = (await runScript(ctx, 'emqCountPending', [ctx.keys.fence], [])) as number[];
  const [pending, active, schedule, dead] = reply.map(Number);
  return { pending, active, schedule, dead };
}

/**
 * Pending ids newest first (mint order, the ids' own bytes), across the sets the options
 * select, merged in one read-only script; page on with `after` = the last id returned. The
 * order is by id, not by claim order: priority and lane fairness decide what is claimed next.
 * Bad options throw InvalidArgumentError before anything is sent.
 */
export async function browsePending(ctx: ScriptContext, options: PendingBrowse): Promise<JobId[]> {
  const { limit } = options;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > PENDING_BROWSE_MAX) {
    throw new InvalidArgumentError(`limit must be an integer from 1 to ${PENDING_BROWSE_MAX}`);
  }
  const lane = options.lane === undefined ? '' : assertLaneName(options.lane);
  const level = options.priority === undefined ? '' : assertPriority(options.priority);
  const after = options.after === undefined ? '' : assertJobId(options.after);
  const reply = await runScript(ctx, 'emqBrowsePending', [ctx.keys.fence], [lane, level, limit, after]);
  return reply as JobId[];
}
