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
 *   - next occurrences that were claimed (active, retrying, dead, finished) or are gone
 *     (removed by a user, drained, lost) without the fast path advancing them: advanced;
 *   - next occurrences of 'skip' schedules still waiting but overdue by more than
 *     missedAfterMs: replaced by the next future run, unrun.
 * One promoted but not claimed yet (pending) is left alone: the claim advances it, so a
 * backlog (a paused queue, busy workers) holds at most one unstarted occurrence per schedule,
 * and removeSchedule still reaches it.
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
    const { redis } = ctx;
    const { now, places } = await occurrencePlaces(ctx, entries);
    let advanced = 0;
    const overdue: [string, string, number][] = [];
    for (const [index, [key, id]] of entries.entries()) {
      const place = places[index];
      if (place.where === 'left') {
        if ((await this.advance(ctx, key, id, false)) === 'advanced') advanced++;
      } else if (place.where === 'waiting' && place.runAt < now) {
        overdue.push([key, id, place.runAt]);
      }
    }
    let skipped = 0;
    if (overdue.length > 0) {
      const definitions = await redis.hmget(ctx.keys.schedulers, ...overdue.map(([key]) => key));
      for (const [index, [key, id, runAt]] of overdue.entries()) {
        const text = definitions[index];
        if (text === null) continue;
        const { missed, missedAfterMs } = parseDefinition(text).options;
        if (missed !== 'skip' || now - runAt <= missedAfterMs) continue;
        if ((await this.advance(ctx, key, id, true)) === 'advanced') skipped++;
      }
    }
    return { advanced, skipped };
  }
}

/**
 * Where each next occurrence is, in at most two pipelined reads: waiting (in the schedule set,
 * never claimed), pending (promoted, not claimed yet), or left (claimed, or gone): the places
 * occurrence_at in schedule-occurrence.lua.ts tells apart, which the advance checks again.
 * Pipelines, not MULTIs: a full Redis refuses every command queued in a MULTI, reads too, and
 * nothing here needs one instant, since the advance acts only where it finds the occurrence
 * still is (a place read a moment early is at worst a 'stale' advance).
 */
type OccurrencePlace = { where: 'waiting'; runAt: number } | { where: 'pending' | 'left' };

async function occurrencePlaces(
  ctx: ScriptContext,
  entries: readonly [string, string][],
): Promise<{ now: number; places: OccurrencePlace[] }> {
  const { redis, keys } = ctx;
  const batch = redis.pipeline().time();
  for (const [, id] of entries) batch.zscore(keys.schedule, id).hmget(keys.job(id), 'a', 'l', 'y', 'sa');
  const [time, ...replies] = await execAll(batch, `The schedule sweep of ${keys.queue}`);
  const places: OccurrencePlace[] = [];
  const unscored: { index: number; id: string; lane: string | null; level: string | null }[] = [];
  entries.forEach(([, id], index) => {
    const score = replies[index * 2] as string | null;
    const [attempts, lane, level, planned] = replies[index * 2 + 1] as (string | null)[];
    // One in the schedule set with attempts waits out a retry backoff: it ran.
    if (score !== null && Number(attempts ?? 0) === 0)
      places.push({ where: 'waiting', runAt: Number(score) });
    else places.push({ where: 'left' });
    // Every occurrence's row has its planned run-at: without one the row is gone.
    if (score === null && planned !== null) unscored.push({ index, id, lane, level });
  });
  // An occurrence out of the schedule set with its row may sit in its lane's pending set.
  if (unscored.length > 0) {
    const pending = unscored.reduce(
      (reads, { id, lane, level }) => reads.zscore(keys.pendingOf(lane ?? undefined, Number(level ?? 0)), id),
      redis.pipeline(),
    );
    const scores = await execAll(pending, `The pending occurrences of ${keys.queue}`);
    unscored.forEach(({ index }, i) => {
      if (scores[i] !== null) places[index] = { where: 'pending' };
    });
  }
  return { now: timeMs(time), places };
}
