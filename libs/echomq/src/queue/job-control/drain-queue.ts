import type { ScriptContext } from '../../scripts';
import { CONTROL_CHUNK_MAX, drainChunk, WALK_START } from '../../scripts/drain';
import { repeatUntilKnown, type RepeatOptions } from '../../scripts/repeat';
import { newRequestId } from '../../scripts/request-id';
import { booleanOr, optionsOf } from './control-arguments';

export interface DrainOptions {
  /** Keep scheduled jobs (delayed ones and retries waiting out a backoff); default false. */
  readonly keepScheduled?: boolean;
}

/**
 * Removes every pending job (every lane and priority level) and, unless kept, every scheduled
 * one, CONTROL_CHUNK_MAX jobs and WALK_SETS_MAX lanes' sets per script call (each call hands
 * the next the cursor of its walk over the lanes), until a call says it is done. Active and
 * dead jobs stay.
 * Each chunk is replay-safe (its own request id, repeated while its outcome is unknown).
 * Returns the jobs removed. A walk that ends while lanes may have joined or moved behind it
 * begins another (the script decides: drain.lua.ts), up to WALKS_MAX walks, so jobs enqueued
 * while it runs may be drained too, and a drain under a producer returns after the last walk.
 */
export async function drainQueue(
  ctx: ScriptContext,
  options: DrainOptions | undefined,
  repeat: () => RepeatOptions,
): Promise<number> {
  const keepScheduled = booleanOr(
    optionsOf(options, ['keepScheduled'], 'drain options').keepScheduled,
    'keepScheduled',
    false,
  );
  let total = 0;
  let cursor = WALK_START;
  for (;;) {
    const requestId = newRequestId();
    const from = cursor;
    const chunk = await repeatUntilKnown(
      () => drainChunk(ctx, { keepScheduled, limit: CONTROL_CHUNK_MAX, cursor: from }, requestId),
      repeat(),
    );
    total += chunk.count;
    if (!chunk.more) return total;
    cursor = chunk.cursor;
  }
}
