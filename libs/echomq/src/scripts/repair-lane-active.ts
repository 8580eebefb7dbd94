import type { ScriptContext } from './context';
import { LANE_RECOUNT_MAX } from './lua/repair-lane-active.lua';
import { modeArg, type RepairMode } from './repair-mode';
import { runScript } from './run-script';

export { LANE_RECOUNT_MAX };

export interface LaneCountDrift {
  readonly lane: string;
  /** What lane-active holds for it. */
  readonly stored: number;
  /** Its jobs in active, recounted. */
  readonly recounted: number;
}

export type LaneRecount =
  | { readonly recounted: true; readonly active: number; readonly drifts: LaneCountDrift[] }
  /** More jobs in active than one recount reads at once: nothing was read. */
  | { readonly recounted: false; readonly active: number };

/**
 * Recounts each lane's jobs in active against lane-active, at the script's instant (with at
 * most `most` jobs in active, up to LANE_RECOUNT_MAX); with 'repair' the counts that differ are
 * set to the recount (and a 'repaired' event names the lanes).
 */
export async function repairLaneActive(
  ctx: ScriptContext,
  mode: RepairMode,
  most: number = LANE_RECOUNT_MAX,
): Promise<LaneRecount> {
  const { keys } = ctx;
  const reply = (await runScript(
    ctx,
    'emqRepairLaneActive',
    [keys.fence, keys.active, keys.metrics, keys.events, keys.wake],
    [modeArg(mode), ctx.eventsMaxLen, most],
  )) as (string | number)[];
  const active = Number(reply[1]);
  if (Number(reply[0]) !== 1) return { recounted: false, active };
  const drifts: LaneCountDrift[] = [];
  for (let i = 2; i < reply.length; i += 3) {
    drifts.push({ lane: String(reply[i]), stored: Number(reply[i + 1]), recounted: Number(reply[i + 2]) });
  }
  return { recounted: true, active, drifts };
}
