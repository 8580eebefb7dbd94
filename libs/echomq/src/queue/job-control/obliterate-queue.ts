import { queueRegistryKey } from '../../keyspace';
import type { ScriptContext } from '../../scripts';
import { ObliterateStoppedError, QueueBusyError } from '../../errors';
import { CONTROL_CHUNK_MAX, WALK_START } from '../../scripts/drain';
import { WALKS_MAX } from '../../scripts/lua/pending-sets';
import { obliterateChunk } from '../../scripts/obliterate';
import { repeatUntilKnown, type RepeatOptions } from '../../scripts/repeat';
import { newRequestId } from '../../scripts/request-id';
import { booleanOr, optionsOf } from './control-arguments';

/**
 * Jobs per obliterate call. The promise is "no call over about 10 ms"; the spec of 100,000 jobs
 * over 50 lanes reads each call's time from SLOWLOG (test/control/obliterate-slowlog.spec.ts).
 */
export const OBLITERATE_CHUNK = CONTROL_CHUNK_MAX;

/**
 * Walks over the lanes' pending sets one obliterate begins again because jobs came in behind
 * the last walk; past it the producers outrun the calls and it stops (ObliterateStoppedError).
 */
export const OBLITERATE_WALKS_MAX = WALKS_MAX;

export interface ObliterateOptions {
  /** Remove active jobs too (their handlers are aborted); without it a busy queue is refused. Default false. */
  readonly force?: boolean;
}

/**
 * Deletes the whole queue, OBLITERATE_CHUNK jobs per script call (see obliterate.lua.ts): the
 * first call pauses it, the last deletes its own keys; then its name leaves the registry (a key
 * outside the queue's slot, so a command of its own). Throws QueueBusyError, having written
 * nothing, while workers hold unexpired leases unless forced. After the first call no claim
 * takes a job, the queue being paused; if a later call is refused (the queue was resumed and a
 * job claimed) or producers keep adding jobs for OBLITERATE_WALKS_MAX walks, it throws
 * ObliterateStoppedError: the queue is left paused and partly deleted, and a new obliterate
 * finishes it. Each chunk is replay-safe. Returns the jobs removed.
 */
export async function obliterateQueue(
  ctx: ScriptContext,
  options: ObliterateOptions | undefined,
  repeat: () => RepeatOptions,
): Promise<{ removed: number }> {
  const force = booleanOr(optionsOf(options, ['force'], 'obliterate options').force, 'force', false);
  let removed = 0;
  let cursor = WALK_START;
  let walks = 1;
  for (let call = 0; ; call++) {
    const requestId = newRequestId();
    const chunk = { force, limit: OBLITERATE_CHUNK, removedBefore: removed, cursor };
    let outcome;
    try {
      outcome = await repeatUntilKnown(() => obliterateChunk(ctx, chunk, requestId), repeat());
    } catch (error) {
      // The first call's refusal wrote nothing; a later one's leaves the queue paused, part gone.
      if (call > 0 && error instanceof QueueBusyError) {
        throw new ObliterateStoppedError(ctx.keys.queue, error.active, 'workers', removed);
      }
      throw error;
    }
    removed += outcome.removed;
    if (outcome.done) break;
    cursor = outcome.cursor;
    if (outcome.again && ++walks > OBLITERATE_WALKS_MAX) {
      throw new ObliterateStoppedError(ctx.keys.queue, 0, 'producers', removed);
    }
  }
  await ctx.redis.srem(queueRegistryKey(ctx.keys.prefix), ctx.keys.queue);
  return { removed };
}
