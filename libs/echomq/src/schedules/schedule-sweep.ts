import { execAll } from '../connection/exec-all';
import type { ScriptContext } from '../scripts/context';
import type { AdvanceOutcome } from './advance-schedule';
import { timeMs } from './next-run';
import { parseDefinition } from './schedule-definition';

/** Schedules looked at per HSCAN chunk; each chunk costs one HSCAN and one pipelined read. */
const CHUNK = 100;

export type Advance = (
  ctx: ScriptContext,
  key: string,
  expectedId: string | null,
  replace: boolean,
) => Promise<AdvanceOutcome>;

export interface SweepResult {
  /** Schedules whose next occurrence had left the schedule set and that were advanced. */
  readonly advanced: number;
  /** Overdue occurrences of 'skip' schedules replaced by their next future run. */
  readonly skipped: number;
  /** Whether the whole hash was walked (false: the next sweep goes on from here). */
  readonly complete: boolean;
}

/**
 * The reapers' safety net for schedules. Per queue, it walks scheduler-next chunk by chunk
 * (resuming where the last sweep stopped) and finds
 *   - next occurrences that left the schedule set without the fast path advancing them
 *     (promoted while no worker claimed, removed by a user, drained, lost): advanced;
 *   - next occurrences of 'skip' schedules still waiting but overdue by more than
 *     missedAfterMs: replaced by the next future run, unrun.
 * A queue without schedules costs one EXISTS.
 */
export class ScheduleSweeper {
  private readonly cursors = new Map<string, string>();

  constructor(private readonly advance: Advance) {}

  async sweep(ctx: ScriptContext, maxChunks: number): Promise<SweepResult> {
    const { redis, keys } = ctx;
    let advanced = 0;
    let skipped = 0;
    // EXISTS rather than HLEN: the same one cheap command, and within the rights documented
    // for an ACL user (docs/upgrading.md).
    if ((await redis.exists(keys.schedulers)) === 0) {
      this.cursors.delete(keys.queue);
      return { advanced, skipped, complete: true };
    }
    let cursor = this.cursors.get(keys.queue) ?? '0';
    for (let chunk = 0; chunk < maxChunks; chunk++) {
      const [next, flat] = await redis.hscan(keys.schedulerNext, cursor, 'COUNT', CHUNK);
      cursor = next;
      const entries: [string, string][] = [];
      for (let i = 0; i < flat.length; i += 2) entries.push([flat[i], flat[i + 1]]);
      const outcome = await this.sweepChunk(ctx, entries);
      advanced += outcome.advanced;
      skipped += outcome.skipped;
      if (cursor === '0') break;
    }
    if (cursor === '0') this.cursors.delete(keys.queue);
    else this.cursors.set(keys.queue, cursor);
    return { advanced, skipped, complete: cursor === '0' };
  }

  /** Forgets where a queue's walk stands (the queue left the registry). */
  forget(queue: string): void {
    this.cursors.delete(queue);
  }

  private async sweepChunk(
    ctx: ScriptContext,
    entries: readonly [string, string][],
  ): Promise<{ advanced: number; skipped: number }> {
    if (entries.length === 0) return { advanced: 0, skipped: 0 };
    const { redis, keys } = ctx;
    const batch = redis.multi().time();
    for (const [, id] of entries) batch.zscore(keys.schedule, id);
    const [time, ...scores] = await execAll(batch, `The schedule sweep of ${keys.queue}`);
    const now = timeMs(time);
    const left: string[][] = [];
    const overdue: [string, string][] = [];
    entries.forEach(([key, id], index) => {
      const score = scores[index] as string | null;
      if (score === null) left.push([key, id]);
      else if (Number(score) < now) overdue.push([key, id]);
    });
    let advanced = 0;
    for (const [key, id] of left) {
      if ((await this.advance(ctx, key, id, false)) === 'advanced') advanced++;
    }
    let skipped = 0;
    if (overdue.length > 0) {
      const definitions = await redis.hmget(keys.schedulers, ...overdue.map(([key]) => key));
      const scoreOf = new Map(entries.map(([key], index) => [key, Number(scores[index])]));
      for (const [index, [key, id]] of overdue.entries()) {
        const text = definitions[index];
        if (text === null) continue;
        const { missed, missedAfterMs } = parseDefinition(text).options;
        if (missed !== 'skip' || now - scoreOf.get(key)! <= missedAfterMs) continue;
        if ((await this.advance(ctx, key, id, true)) === 'advanced') skipped++;
      }
    }
    return { advanced, skipped };
  }
}
