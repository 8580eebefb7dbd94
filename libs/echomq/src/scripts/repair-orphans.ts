import { InvalidArgumentError } from '../errors';
import { assertJobId, assertLaneName, assertPriority } from '../keyspace';
import type { ScriptContext } from './context';
import { SCRIPT_BATCH_MAX } from './limits';
import { assertBatch, modeArg, type RepairMode } from './repair-mode';
import type { LaneLevel } from './repair-lane-index';
import { runScript } from './run-script';

export { ORPHAN_RECHECK_LOOKUPS_MAX, ORPHAN_RECHECK_SETS_MAX } from './lua/repair-orphans.lua';

export interface Orphan {
  readonly id: string;
  /**
   * Where a repair puts it: dead when its retry budget is spent, else pending; 'unverified' when
   * the queue's lane index names too many pending sets to rule out that one of them holds it
   * (ORPHAN_RECHECK_SETS_MAX): not judged, nothing written.
   */
  readonly to: 'pending' | 'dead' | 'unverified';
}

/**
 * Which of `ids` (whose rows were found, say by SCAN) have an unfinished row in no state set at
 * the script's instant; with 'repair' each goes back to pending, or to dead when its budget is
 * spent. A row that another lane's (or level's) pending set holds is no orphan and is left alone:
 * the script looks in the plain pending set, in every set ready and held name, and in `alsoIn`
 * (sets the caller saw holding misplaced jobs, which no index may name); see
 * repair-orphans.lua.ts for what it cannot see. Candidates a call leaves unjudged (its lookup
 * budget) are sent again in a call of their own, so each id comes back at most once.
 */
export async function repairOrphans(
  ctx: ScriptContext,
  mode: RepairMode,
  ids: readonly string[],
  alsoIn: readonly LaneLevel[] = [],
): Promise<Orphan[]> {
  const { keys } = ctx;
  assertBatch(ids, 'repairOrphans ids');
  if (alsoIn.length > SCRIPT_BATCH_MAX) {
    throw new InvalidArgumentError(
      `repairOrphans alsoIn: at most ${SCRIPT_BATCH_MAX} sets, got ${alsoIn.length}`,
    );
  }
  const sets = alsoIn.flatMap(({ lane, level }) => [assertPriority(level), assertLaneName(lane)]);
  const out: Orphan[] = [];
  let asked = ids.map(assertJobId);
  while (asked.length > 0) {
    const reply = (await runScript(
      ctx,
      'emqRepairOrphans',
      [keys.fence, keys.active, keys.schedule, keys.dead, keys.metrics, keys.events, keys.wake],
      [modeArg(mode), ctx.eventsMaxLen, alsoIn.length, ...sets, ...asked],
    )) as [string, Orphan['to'] | 'later'][];
    const later: typeof asked = [];
    for (const [id, to] of reply) {
      if (to === 'later') later.push(id as (typeof asked)[number]);
      else out.push({ id, to });
    }
    // Each call judges at least one candidate, so this ends.
    asked = later;
  }
  return out;
}
