import type { Logger } from '@nestjs/common';
import type { ScriptContext } from '../scripts';
import { readLimits, writeLimits, type FlowLimits } from '../scripts/set-limits';
import { describeLimit, FLOW_LIMIT_KEYS, sameLimit } from './flow-limits';

/**
 * Writes the shared limits this process's configuration gives a queue, when the queue is
 * registered. The limits live in Redis, one set for every worker, so the last process to
 * boot wins; a process that finds a different value stored says so, since two processes
 * configured differently would otherwise overwrite each other without a word (an admin's
 * setLimits too). Nothing configured: nothing is read or written.
 */
export async function writeConfiguredLimits(
  ctx: ScriptContext,
  configured: Partial<FlowLimits>,
  logger: Pick<Logger, 'warn'>,
): Promise<void> {
  const keys = FLOW_LIMIT_KEYS.filter((key) => configured[key] !== undefined);
  if (keys.length === 0) return;
  const stored = await readLimits(ctx);
  const changed = keys.filter((key) => !sameLimit(stored[key], configured[key] ?? null));
  if (changed.length === 0) return;
  for (const key of changed) {
    if (stored[key] === null) continue;
    logger.warn(
      `Queue ${ctx.keys.queue}: ${key} was ${describeLimit(stored[key])} in Redis (set by another process ` +
        `or an admin call); this process's configuration sets ${describeLimit(configured[key])}`,
    );
  }
  await writeLimits(ctx, Object.fromEntries(changed.map((key) => [key, configured[key]])));
}
