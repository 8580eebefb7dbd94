import type { ScriptContext } from './context';

export interface PromoteOutcome {
  readonly promoted: number;
  readonly more: boolean;
}

export async function promoteDue(ctx: ScriptContext, limit: number): Promise<PromoteOutcome> {
  const { keys } = ctx;
  const [promoted, more] = (await ctx.redis.emqPromote(
    keys.schedule,
    keys.pending,
    keys.metrics,
    keys.events,
    keys.wake,
    limit,
    ctx.eventsMaxLen,
  )) as [number, number];
  return { promoted: Number(promoted), more: Number(more) === 1 };
}
