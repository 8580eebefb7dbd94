import { describeValue, InvalidArgumentError } from '../errors';
import type { ScriptContext } from './context';
import { runScript } from './run-script';

/**
 * Holds the queue of `ctx` back for every worker until `until` (ms since epoch on the Redis
 * server's clock), keeping a later hold already in force; returns the end of the hold in force
 * (0: `until` had passed, nothing held). Idempotent, so a repeat after a lost reply is safe.
 */
export async function holdQueueUntil(ctx: ScriptContext, until: number): Promise<number> {
  if (!Number.isSafeInteger(until) || until < 1) {
    throw new InvalidArgumentError(
      `holdQueueUntil: until must be a positive integer (ms), got ${describeValue(until)}`,
    );
  }
  return Number(await runScript(ctx, 'emqHoldQueue', [ctx.keys.fence], [until]));
}
