import { queueRegistryKey } from '../../keyspace';
import type { ScriptContext } from '../../scripts';
import { CONTROL_CHUNK_MAX } from '../../scripts/drain';
import { obliterateChunk } from '../../scripts/obliterate';
import { repeatUntilKnown, type RepeatOptions } from '../../scripts/repeat';
import { newRequestId } from '../../scripts/request-id';
import { booleanOr, optionsOf } from './control-arguments';

/**
 * Jobs per obliterate call. The promise is "no call over about 10 ms"; the spec of 100,000 jobs
 * over 50 lanes reads each call's time from SLOWLOG (test/control/obliterate-slowlog.spec.ts).
 */
export const OBLITERATE_CHUNK = CONTROL_CHUNK_MAX;

export interface ObliterateOptions {
  /** Remove active jobs too (their handlers are aborted); without it a busy queue is refused. Default false. */
  readonly force?: boolean;
}

/**
 * Deletes the whole queue, OBLITERATE_CHUNK jobs per script call (see obliterate.lua.ts): the
 * first call pauses it, the last deletes its own keys; then its name leaves the registry (a key
 * outside the queue's slot, so a command of its own). Throws QueueBusyError, having written
 * nothing, while workers hold jobs unless forced. (After the first call no claim takes a job,
 * the queue being paused; one resumed meanwhile can make a later call refuse: the queue is then
 * left paused and partly deleted, and a new obliterate finishes it.) Each chunk is replay-safe.
 * Returns the jobs removed.
 */
export async function obliterateQueue(
  ctx: ScriptContext,
  options: ObliterateOptions | undefined,
  repeat: () => RepeatOptions,
): Promise<{ removed: number }> {
  const force = booleanOr(optionsOf(options, ['force'], 'obliterate options').force, 'force', false);
  let removed = 0;
  for (;;) {
    const requestId = newRequestId();
    const chunk = await repeatUntilKnown(
      () => obliterateChunk(ctx, { force, limit: OBLITERATE_CHUNK, removedBefore: removed }, requestId),
      repeat(),
    );
    removed += chunk.removed;
    if (chunk.done) break;
  }
  await ctx.redis.srem(queueRegistryKey(ctx.keys.prefix), ctx.keys.queue);
  return { removed };
}
