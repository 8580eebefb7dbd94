import type { ScriptContext } from './context';
import { runScript } from './run-script';

export interface PromoteOutcome {
  readonly promoted: number;
  readonly more: boolean;
}

export async function promoteDue(ctx: ScriptContext, limit: number): Promise<PromoteOutcome> {
  const { keys } = ctx;
  const [promoted, more] = (await runScript(
    ctx,
    'emqPromote',
    [keys.fence, keys.schedule, keys.pending, keys.metrics, keys.events, keys.wake],
    [limit, ctx.eventsMaxLen],
  )) as [number, number];
  return { promoted: Number(promoted), more: Number(more) === 1 };
}
