import type { ScriptContext } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import type { LaneLevel } from '../scripts/repair-lane-index';
import type { RepairMode } from '../scripts/repair-mode';
import { ORPHAN_RECHECK_SETS_MAX, repairOrphans } from '../scripts/repair-orphans';
import type { FindingLog } from './findings';
import { classifyKey, inBatches, scanQueueKeys } from './key-scan';

async function* rowIds(ctx: ScriptContext): AsyncGenerator<string[]> {
  for await (const page of scanQueueKeys(ctx.redis, ctx.keys, 'job:*')) {
    const ids: string[] = [];
    for (const key of page) {
      const what = classifyKey(ctx.keys, key);
      if (what.kind === 'row') ids.push(what.id);
    }
    if (ids.length > 0) yield ids;
  }
}

/**
 * Every row of the queue, found by a SCAN pass of its own, judged a batch per script call: an
 * unfinished job's row in no state set is an orphan. Run after every pending set was checked
 * (and, repairing, every misplaced job moved home), so a job pending in a set its row does not
 * name is never taken for an orphan and put in pending a second time: the script also looks in
 * every pending set the lane index names and in `misplacedIn` (the sets seen holding such jobs,
 * which no index may name, where with check they still are; the first SCRIPT_BATCH_MAX of them).
 * Returns the rows scanned.
 */
export async function checkRows(
  ctx: ScriptContext,
  mode: RepairMode,
  log: FindingLog,
  batch: number,
  misplacedIn: readonly LaneLevel[],
): Promise<number> {
  const alsoIn = misplacedIn.slice(0, SCRIPT_BATCH_MAX);
  let rows = 0;
  for await (const ids of inBatches(rowIds(ctx), batch)) {
    rows += ids.length;
    for (const orphan of await repairOrphans(ctx, mode, ids, alsoIn)) {
      if (orphan.to === 'unverified') {
        log.add(
          'orphan-row',
          orphan.id,
          `not judged: the lane index names more than ${ORPHAN_RECHECK_SETS_MAX} pending sets, too many to rule out that one holds it`,
          false,
        );
      } else {
        log.add('orphan-row', orphan.id, `${mode === 'repair' ? 'went' : 'goes'} to ${orphan.to}`);
      }
    }
  }
  return rows;
}
