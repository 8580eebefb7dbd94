import { assertLaneName, assertPriority, type StateSet } from '../keyspace';
import type { ScriptContext } from './context';
import { assertBatch, modeArg, type RepairMode } from './repair-mode';
import { runScript } from './run-script';

/** One state set of a queue: active, schedule, dead, or one lane's pending set at one level. */
export type MemberSet =
  | { readonly state: Exclude<StateSet, 'pending'> }
  | { readonly state: 'pending'; readonly lane: string; readonly level: number };

export interface MissingRows {
  /** Members that are job ids but have no row. */
  readonly missing: string[];
  /** Members that are not job ids at all (no transition could ever act on them). */
  readonly malformed: string[];
}

/** The key of a member set (the lane and level are checked, as every key is). */
export function memberSetKey(ctx: ScriptContext, set: MemberSet): string {
  return set.state === 'pending' ? ctx.keys.pendingOf(set.lane, set.level) : ctx.keys.set(set.state);
}

/**
 * Which of `members` (as read from `set`, say by ZSCAN) are still in it at the script's instant
 * and have no row; with 'repair' they leave the set in the same call. Members are passed as the
 * set holds them: a member that is not a job id is reported as malformed, and no row key is
 * composed for it. A repair that removed any appends a 'repaired' event.
 */
export async function repairMissingRows(
  ctx: ScriptContext,
  mode: RepairMode,
  set: MemberSet,
  members: readonly string[],
): Promise<MissingRows> {
  const key = memberSetKey(ctx, set);
  const place = set.state === 'pending' ? [assertLaneName(set.lane), assertPriority(set.level)] : ['', ''];
  assertBatch(members, 'repairMissingRows members');
  const [missing, malformed] = (await runScript(
    ctx,
    'emqRepairMissingRows',
    [ctx.keys.fence, key, ctx.keys.metrics, ctx.keys.events],
    [modeArg(mode), ctx.eventsMaxLen, set.state, ...place, ...members],
  )) as [string[], string[]];
  return { missing, malformed };
}
