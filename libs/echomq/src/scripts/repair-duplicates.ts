import { assertJobId, assertLaneName, assertPriority } from '../keyspace';
import type { ScriptContext } from './context';
import { assertBatch, modeArg, type RepairMode } from './repair-mode';
import { runScript } from './run-script';

/** The state a duplicate keeps: see the rule in repair-duplicates.lua.ts. */
export type KeptState = 'pending' | 'active' | 'schedule' | 'dead';

export interface Duplicate {
  readonly id: string;
  /**
   * The sets that held it: 'pending' (its own lane's set at its level), 'pending:<level>:<lane>'
   * (another lane's or level's), 'active', 'schedule', 'dead'.
   */
  readonly sets: string[];
  readonly kept: KeptState;
}

/** The pending set the ids were read from, when they were read from one. */
export interface SeenIn {
  readonly lane: string;
  readonly level: number;
}

/**
 * Which of `ids` are in more than one state set, or pending in a set their row does not name,
 * at the script's instant; with 'repair' each is left in the one set the rule keeps (and a
 * 'repaired' event says so). Ids without a row are left alone (repairMissingRows).
 */
export async function repairDuplicates(
  ctx: ScriptContext,
  mode: RepairMode,
  ids: readonly string[],
  seenIn?: SeenIn,
): Promise<Duplicate[]> {
  const { keys } = ctx;
  const seen = seenIn ? [assertLaneName(seenIn.lane), assertPriority(seenIn.level)] : ['', ''];
  assertBatch(ids, 'repairDuplicates ids');
  const reply = (await runScript(
    ctx,
    'emqRepairDuplicates',
    [keys.fence, keys.active, keys.schedule, keys.dead, keys.metrics, keys.events, keys.wake],
    [modeArg(mode), ctx.eventsMaxLen, ...seen, ...ids.map(assertJobId)],
  )) as [string, string, KeptState][];
  return reply.map(([id, sets, kept]) => ({ id, sets: sets.split(','), kept }));
}
