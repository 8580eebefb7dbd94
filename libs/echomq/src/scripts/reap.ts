import type { ScriptContext } from './context';
import { runScript } from './run-script';

export interface ReapOutcome {
  readonly toPending: number;
  readonly toDead: number;
  /** More expired leases are waiting beyond this call's limit. */
  readonly more: boolean;
}

export async function reapExpired(ctx: ScriptContext, limit: number): Promise<ReapOutcome> {
  const { keys } = ctx;
  const [toPending, toDead, more] = (await runScript(
    ctx,
    'emqReap',
    [keys.fence, keys.active, keys.pending, keys.dead, keys.metrics, keys.events, keys.wake],
    [keys.jobPrefix, limit, ctx.eventsMaxLen],
  )) as [number, number, number];
  return { toPending: Number(toPending), toDead: Number(toDead), more: Number(more) === 1 };
}
