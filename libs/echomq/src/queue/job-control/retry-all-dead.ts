import type { ScriptContext } from '../../scripts';
import { CONTROL_CHUNK_MAX } from '../../scripts/drain';
import { repeatUntilKnown, type RepeatOptions } from '../../scripts/repeat';
import { newRequestId } from '../../scripts/request-id';
import { retryDeadChunk } from '../../scripts/retry-all';
import { integerIn, optionsOf } from './control-arguments';

/** Most jobs one retryAll call moves (it runs limit / CONTROL_CHUNK_MAX script calls). */
export const RETRY_ALL_MAX = 10_000_000;

export interface RetryAllOptions {
  /** At most this many jobs (1 to 10,000,000); default: as many as dead held when the call began. */
  readonly limit?: number;
}

/**
 * dead -> pending with a fresh budget, oldest first, CONTROL_CHUNK_MAX per script call, as
 * retry does for one job. Without a limit it stops after as many jobs as dead held when it
 * began, so jobs that fail again meanwhile are not retried round and round. Each chunk is
 * replay-safe. Returns the jobs retried.
 */
export async function retryAllDead(
  ctx: ScriptContext,
  options: RetryAllOptions | undefined,
  repeat: () => RepeatOptions,
): Promise<number> {
  const given = optionsOf(options, ['limit'], 'retryAll options').limit;
  const limit =
    given === undefined ? await ctx.redis.zcard(ctx.keys.dead) : integerIn(given, 'limit', 1, RETRY_ALL_MAX);
  let total = 0;
  while (total < limit) {
    const requestId = newRequestId();
    const chunk = await repeatUntilKnown(
      () => retryDeadChunk(ctx, Math.min(CONTROL_CHUNK_MAX, limit - total), requestId),
      repeat(),
    );
    total += chunk.count;
    if (!chunk.more || chunk.count === 0) break;
  }
  return total;
}
