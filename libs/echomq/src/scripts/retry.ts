import type { ScriptContext } from './context';
import { translateReplyError } from './reply-errors';

/** dead -> pending with a fresh budget. Throws JobNotFoundError or JobStateError (not dead). */
export async function retryDead(ctx: ScriptContext, id: string): Promise<void> {
  const { keys } = ctx;
  try {
    await ctx.redis.emqRetry(
      keys.dead,
      keys.pending,
      keys.metrics,
      keys.events,
      keys.wake,
      keys.job(id),
      id,
      ctx.eventsMaxLen,
    );
  } catch (error) {
    translateReplyError(error, id);
  }
}
