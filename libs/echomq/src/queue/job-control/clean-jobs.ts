import { InvalidArgumentError, describeValue } from '../../errors';
import { compareIds, JOB_IDS, type JobId } from '../../ids';
import type { ScriptContext } from '../../scripts';
import { cleanChunk, type CleanState } from '../../scripts/clean';
import { CONTROL_CHUNK_MAX, WALK_START } from '../../scripts/drain';
import { repeatUntilKnown, type RepeatOptions } from '../../scripts/repeat';
import { newRequestId } from '../../scripts/request-id';
import { integerIn, optionsOf } from './control-arguments';

export const CLEAN_LIMIT_DEFAULT = 1_000;
export const CLEAN_LIMIT_MAX = 100_000;
/** The largest age a clean takes: about 317 years, past any id's time. */
export const CLEAN_AGE_MAX_MS = 10_000_000_000_000;

export interface CleanOptions {
  /** Jobs enqueued more than this many ms ago (their id's time, Redis server clock). */
  readonly olderThanMs: number;
  /** At most this many jobs (1 to 100,000); default 1,000. */
  readonly limit?: number;
}

const REFUSED_STATES: Record<string, string> = {
  active:
    'clean does not take active jobs: workers hold them; remove one with remove(), which aborts its handler',
  completed: 'clean does not take completed jobs: their rows expire by themselves (retainCompletedMs)',
};

function checkState(state: unknown): CleanState {
  if (state === 'pending' || state === 'schedule' || state === 'dead') return state;
  const why = typeof state === 'string' ? REFUSED_STATES[state] : undefined;
  throw new InvalidArgumentError(
    why ?? `state must be pending, schedule or dead, got ${describeValue(state)}`,
  );
}

/**
 * Removes jobs of one state enqueued more than olderThanMs ago on the server clock, up to
 * limit, CONTROL_CHUNK_MAX per script call. pending goes lane by lane (WALK_SETS_MAX sets a call,
 * the cursor carried from call to call; a walk that removed jobs, or during which held's size
 * changed, is followed by another, up to WALKS_MAX, for lanes that moved behind it), each lane's old jobs oldest first: the limit applies in
 * lane order, not globally oldest first (a global merge would read every lane in one call);
 * dead is oldest first (the set's mint order). schedule is ordered
 * by run-at, so its candidates are found first by a ZSCAN of the set (bounded calls, no write)
 * and removed oldest first, each checked again by the script. Each chunk is replay-safe.
 * Returns the ids removed, in the order removed.
 */
export async function cleanJobs(
  ctx: ScriptContext,
  state: CleanState,
  options: CleanOptions,
  repeat: () => RepeatOptions,
): Promise<JobId[]> {
  const checked = checkState(state);
  const given = optionsOf(options, ['olderThanMs', 'limit'], 'clean options');
  if (options === undefined) throw new InvalidArgumentError('clean needs options: { olderThanMs, limit? }');
  const olderThanMs = integerIn(given.olderThanMs, 'olderThanMs', 0, CLEAN_AGE_MAX_MS);
  const limit =
    given.limit === undefined ? CLEAN_LIMIT_DEFAULT : integerIn(given.limit, 'limit', 1, CLEAN_LIMIT_MAX);
  const chunk = async (size: number, more: { candidates?: JobId[]; cursor?: string }) => {
    const requestId = newRequestId();
    return repeatUntilKnown(
      () => cleanChunk(ctx, { state: checked, olderThanMs, limit: size, ...more }, requestId),
      repeat(),
    );
  };
  const removed: JobId[] = [];
  if (checked === 'pending') {
    let cursor = WALK_START;
    while (removed.length < limit && cursor !== '') {
      const done = await chunk(Math.min(CONTROL_CHUNK_MAX, limit - removed.length), { cursor });
      removed.push(...done.ids);
      cursor = done.cursor;
    }
    return removed;
  }
  if (checked === 'dead') {
    while (removed.length < limit) {
      const size = Math.min(CONTROL_CHUNK_MAX, limit - removed.length);
      const { ids } = await chunk(size, {});
      removed.push(...ids);
      if (ids.length < size) break;
    }
    return removed;
  }
  const candidates = await oldScheduled(ctx, olderThanMs, limit);
  for (let at = 0; at < candidates.length; at += CONTROL_CHUNK_MAX) {
    const slice = candidates.slice(at, at + CONTROL_CHUNK_MAX);
    removed.push(...(await chunk(slice.length, { candidates: slice })).ids);
  }
  return removed;
}

/** The `limit` oldest scheduled ids enqueued before now - olderThanMs (server time, read once). */
async function oldScheduled(ctx: ScriptContext, olderThanMs: number, limit: number): Promise<JobId[]> {
  const [seconds, micros] = await ctx.redis.time();
  const cutoff = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - olderThanMs;
  let kept: JobId[] = [];
  let cursor = '0';
  do {
    const [next, flat] = await ctx.redis.zscan(ctx.keys.schedule, cursor, 'COUNT', 1000);
    cursor = next;
    for (let i = 0; i < flat.length; i += 2) {
      const parts = JOB_IDS.parts(flat[i]);
      if (parts && parts.timeMs < cutoff) kept.push(flat[i] as JobId);
    }
    // Only the oldest `limit` can be taken: keep the list bounded as the scan goes.
    if (kept.length > 2 * limit) kept = [...new Set(kept)].sort(compareIds).slice(0, limit);
  } while (cursor !== '0');
  // ZSCAN may return a member twice.
  return [...new Set(kept)].sort(compareIds).slice(0, limit);
}
