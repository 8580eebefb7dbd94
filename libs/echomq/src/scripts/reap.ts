import type { ScriptContext } from './context';
import { DEAD_RETENTION_DEFAULTS, deadRetentionArgs, type DeadRetention } from './dead-retention';
import { runScript } from './run-script';

export interface ReapOutcome {
  readonly toPending: number;
  readonly toDead: number;
  /** More expired leases are waiting beyond this call's limit. */
  readonly more: boolean;
}

/**
 * Reaps up to `limit` expired leases. Jobs that go to dead trim it in the same call (oldest first,
 * to `dead`: the reaping process's options for the queue; defaults when not given).
 */
export async function reapExpired(
  ctx: ScriptContext,
  limit: number,
  dead: DeadRetention = DEAD_RETENTION_DEFAULTS,
): Promise<ReapOutcome> {
  const { keys } = ctx;
  const [toPending, toDead, more] = (await runScript(
    ctx,
    'emqReap',
    [keys.fence, keys.active, keys.pending, keys.dead, keys.metrics, keys.events, keys.wake],
    [keys.jobPrefix, limit, ctx.eventsMaxLen, ...deadRetentionArgs(dead)],
  )) as [number, number, number];
  return { toPending: Number(toPending), toDead: Number(toDead), more: Number(more) === 1 };
}
