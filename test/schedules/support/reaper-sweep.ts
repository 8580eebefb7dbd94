import type { Redis } from 'ioredis';
import { ScheduleSweeper, type JobId, type SweepResult, monotonicMs } from '@app/echomq/internal';
import { advanceSchedule } from '@app/echomq/schedules/advance-schedule';
import { idMinter, scriptContext } from '../../support/redis';

/** A node number no test process mints on. */
const SWEEP_NODE = 977;

/**
 * One pass of the schedule safety net over a queue, as the next reaper to run would make it.
 * After a SIGKILL the last run may have finished without its advance (that is the sweep's
 * job), so a test checks the invariants after the sweep, not in that window.
 */
export async function sweepAsAReaper(redis: Redis, queue: string): Promise<SweepResult> {
  const mint = idMinter(SWEEP_NODE);
  const deps = {
    mintIds: async (count: number) => Array.from({ length: count }, () => mint() as JobId),
    repeat: () => ({ untilMs: monotonicMs() + 5_000 }),
  };
  const sweeper = new ScheduleSweeper((ctx, key, expected, replace) =>
    advanceSchedule(ctx, key, expected, deps, replace),
  );
  return sweeper.sweep(scriptContext(redis, queue), 10);
}
