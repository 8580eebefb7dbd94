import { assertLaneName, assertPriority } from '../keyspace';
import type { ScriptContext } from './context';
import { assertBatch, modeArg, type RepairMode } from './repair-mode';
import { runScript } from './run-script';

/** A lane's pending set at one level. */
export interface LaneLevel {
  readonly lane: string;
  readonly level: number;
}

/** What is wrong with a (lane, level)'s entries in ready and held: see repair-lane-index.lua.ts. */
export type LaneIndexProblem = 'unindexed' | 'ready-and-held' | 'indexed-without-work';

export interface LaneIndexFinding extends LaneLevel {
  readonly problem: LaneIndexProblem;
}

/**
 * Which of `pairs` have a pending set that ready:<level> and held do not name exactly once (or
 * name without work), at the script's instant; with 'repair' their entries are mended (and a
 * 'repaired' event names them).
 */
export async function repairLaneIndex(
  ctx: ScriptContext,
  mode: RepairMode,
  pairs: readonly LaneLevel[],
): Promise<LaneIndexFinding[]> {
  const { keys } = ctx;
  assertBatch(pairs, 'repairLaneIndex pairs');
  const args = pairs.flatMap(({ lane, level }) => [assertPriority(level), assertLaneName(lane)]);
  const reply = (await runScript(
    ctx,
    'emqRepairLaneIndex',
    [keys.fence, keys.metrics, keys.events, keys.wake],
    [modeArg(mode), ctx.eventsMaxLen, pairs.length, ...args],
  )) as [number, string, LaneIndexProblem][];
  return reply.map(([level, lane, problem]) => ({ level: Number(level), lane, problem }));
}
