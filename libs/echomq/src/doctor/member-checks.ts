import { isJobId } from '../ids';
import { DEFAULT_LANE, DEFAULT_PRIORITY } from '../keyspace';
import type { ScriptContext } from '../scripts';
import { repairDuplicates } from '../scripts/repair-duplicates';
import { memberSetKey, repairMissingRows, type MemberSet } from '../scripts/repair-missing-rows';
import type { RepairMode } from '../scripts/repair-mode';
import type { FindingLog } from './findings';
import { inBatches, scanSortedSet } from './key-scan';

/** The four state sets as member sets; the plain pending set is the default lane's at level 0. */
export const STATE_MEMBER_SETS: readonly MemberSet[] = [
  { state: 'active' },
  { state: 'schedule' },
  { state: 'dead' },
  { state: 'pending', lane: DEFAULT_LANE, level: DEFAULT_PRIORITY },
];

function setName(set: MemberSet): string {
  if (set.state !== 'pending') return set.state;
  return set.lane === DEFAULT_LANE && set.level === DEFAULT_PRIORITY
    ? 'pending'
    : `pending:${set.level}:${set.lane}`;
}

/** What one set's check saw. */
export interface MemberCheck {
  /** Members scanned. */
  readonly members: number;
  /** Whether the set held jobs its rows do not name it for (another lane's or level's jobs). */
  readonly heldMisplaced: boolean;
}

/**
 * Checks every member of one set, a ZSCAN batch per pair of script calls: members without a
 * row (or that are no job ids), then members in more than one set or in a pending set their row
 * does not name. Each script judges its batch at one instant, so a job that moves while the
 * scan goes on is never reported for a state it passed through.
 */
export async function checkMembers(
  ctx: ScriptContext,
  set: MemberSet,
  mode: RepairMode,
  log: FindingLog,
  batch: number,
): Promise<MemberCheck> {
  const name = setName(set);
  const seenIn = set.state === 'pending' ? { lane: set.lane, level: set.level } : undefined;
  let members = 0;
  let heldMisplaced = false;
  for await (const batchOf of inBatches(scanSortedSet(ctx.redis, memberSetKey(ctx, set), batch), batch)) {
    members += batchOf.length;
    const { missing, malformed } = await repairMissingRows(ctx, mode, set, batchOf);
    for (const id of missing) log.add('member-without-row', id, `in ${name}`);
    for (const member of malformed) log.add('malformed-member', member, `in ${name}`);
    const gone = new Set(missing);
    const ids = batchOf.filter((member) => isJobId(member) && !gone.has(member));
    if (ids.length === 0) continue;
    for (const dup of await repairDuplicates(ctx, mode, ids, seenIn)) {
      const kind = dup.sets.length > 1 ? 'in-two-sets' : 'wrong-pending-set';
      if (dup.sets.some((held) => held.startsWith('pending:'))) heldMisplaced = true;
      log.add(kind, dup.id, `in ${dup.sets.join(', ')}: ${mode === 'repair' ? 'kept' : 'keeps'} ${dup.kept}`);
    }
  }
  return { members, heldMisplaced };
}
