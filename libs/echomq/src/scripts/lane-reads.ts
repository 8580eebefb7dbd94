import type { ScriptContext } from './context';
import { runScript } from './run-script';

/** One lane of a queue as the claim sees it now. */
export interface LaneView {
  readonly lane: string;
  /** Its jobs in pending, over every priority level. */
  readonly pending: number;
  /** Its jobs in active (claimed, not yet finished). */
  readonly active: number;
  /** Paused by pauseLane: workers claim nothing from it until resumeLane. */
  readonly paused: boolean;
  /** Held back from the claim: paused, at its concurrency cap, rate-limited or throttled. */
  readonly held: boolean;
  /** Its share against other lanes at the same level (1 unless set with setLane). */
  readonly weight: number;
  /** The cap in force: its own concurrency, else the queue's laneConcurrency, else null (none). */
  readonly concurrency: number | null;
}

type LaneReply = [string, number, number, number, number, number, number | string];

/**
 * Every lane that has pending work, active jobs, is held back, is paused or has settings of
 * its own (setLane: kept in lanes-configured), sorted by lane name (byte order), read in one
 * script. O(lanes with work + configured lanes) commands.
 */
export async function readLanes(ctx: ScriptContext): Promise<LaneView[]> {
  const reply = (await runScript(ctx, 'emqReadLanes', [ctx.keys.fence], [])) as LaneReply[];
  return reply
    .map(([lane, pending, active, paused, held, weight, cap]) => ({
      lane,
      pending: Number(pending),
      active: Number(active),
      paused: Number(paused) === 1,
      held: Number(held) === 1,
      weight: Number(weight),
      concurrency: cap === '' ? null : Number(cap),
    }))
    .sort((a, b) => (a.lane < b.lane ? -1 : a.lane > b.lane ? 1 : 0));
}
