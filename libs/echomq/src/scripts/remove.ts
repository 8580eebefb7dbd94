import type { ScriptContext } from './context';
import { translateReplyError } from './reply-errors';

export type RemovedFrom = 'pending' | 'active' | 'schedule' | 'dead' | 'completed';

/** Removes a job from whatever state it is in. Throws JobNotFoundError when there is none. */
export async function removeJob(ctx: ScriptContext, id: string): Promise<RemovedFrom> {
  const { keys } = ctx;
  try {
    return (await ctx.redis.emqRemove(
      keys.pending,
      keys.active,
      keys.schedule,
      keys.dead,
      keys.metrics,
      keys.events,
      keys.job(id),
      keys.idempotencyPrefix,
      id,
      ctx.eventsMaxLen,
    )) as RemovedFrom;
  } catch (error) {
    translateReplyError(error, id);
  }
}
