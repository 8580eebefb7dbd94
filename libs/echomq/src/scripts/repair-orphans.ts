import { assertJobId } from '../keyspace';
import type { ScriptContext } from './context';
import { assertBatch, modeArg, type RepairMode } from './repair-mode';
import { runScript } from './run-script';

export interface Orphan {
  readonly id: string;
  /** Where a repair puts it: dead when its retry budget is spent, else pending. */
  readonly to: 'pending' | 'dead';
}

/**
 * Which of `ids` (whose rows were found, say by SCAN) have an unfinished row in no state set at
 * the script's instant; with 'repair' each goes back to pending, or to dead when its budget is spent.
 */
export async function repairOrphans(
  ctx: ScriptContext,
  mode: RepairMode,
  ids: readonly string[],
): Promise<Orphan[]> {
  const { keys } = ctx;
  assertBatch(ids, 'repairOrphans ids');
  const reply = (await runScript(
    ctx,
    'emqRepairOrphans',
    [keys.fence, keys.active, keys.schedule, keys.dead, keys.metrics, keys.wake],
    [modeArg(mode), ...ids.map(assertJobId)],
  )) as [string, 'pending' | 'dead'][];
  return reply.map(([id, to]) => ({ id, to }));
}
