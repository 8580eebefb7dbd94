import { SYSTEM_IDS } from '../systems';
import type { QueueSystem, SystemId } from '../systems/types';
import type { BenchContext } from './context';

/**
 * Runs `run` for every system in turn, round after round (A B C, A B C, ...),
 * on a flushed Redis each time, so drift of the machine touches all systems
 * alike. Returns each system's results in round order. `beforeRound` runs
 * before each round's first system (the cold figures boot that round's fresh
 * worker hosts there, all at once, so no boot overlaps a measured run).
 */
export async function interleaved<T>(
  ctx: BenchContext,
  name: string,
  run: (system: QueueSystem, round: number) => Promise<T>,
  describe: (result: T) => string,
  beforeRound?: (round: number) => Promise<void>,
): Promise<Record<SystemId, T[]>> {
  const results = Object.fromEntries(SYSTEM_IDS.map((id) => [id, [] as T[]])) as Record<SystemId, T[]>;
  for (let round = 0; round < ctx.config.rounds; round++) {
    await beforeRound?.(round);
    for (const system of ctx.systems) {
      await ctx.admin.flushall('SYNC');
      const result = await run(system, round);
      results[system.id].push(result);
      ctx.log(`[${name}] round ${round + 1}/${ctx.config.rounds} ${system.label}: ${describe(result)}`);
    }
  }
  await ctx.admin.flushall('SYNC');
  return results;
}
