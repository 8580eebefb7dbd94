import { assertLaneName } from '../keyspace';
import type { ScriptContext } from './context';
import { assertBatch, modeArg, type RepairMode } from './repair-mode';
import { runScript } from './run-script';

/** What is wrong with a lane's entries in the lane lists: see repair-lane-lists.lua.ts. */
export type LaneListProblem = 'configured-without-settings' | 'settings-not-listed' | 'paused-not-held';

export interface LaneListFinding {
  readonly lane: string;
  readonly problem: LaneListProblem;
}

/**
 * Which of `lanes` disagree with lanes-configured (their settings hash) or, paused, are not
 * held, at the script's instant; with 'repair' the lists are mended (and a 'repaired' event
 * names the lanes).
 */
export async function repairLaneLists(
  ctx: ScriptContext,
  mode: RepairMode,
  lanes: readonly string[],
): Promise<LaneListFinding[]> {
  const { keys } = ctx;
  assertBatch(lanes, 'repairLaneLists lanes');
  const reply = (await runScript(
    ctx,
    'emqRepairLaneLists',
    [keys.fence, keys.metrics, keys.events],
    [modeArg(mode), ctx.eventsMaxLen, ...lanes.map((lane) => assertLaneName(lane))],
  )) as [string, LaneListProblem][];
  return reply.map(([lane, problem]) => ({ lane, problem }));
}
