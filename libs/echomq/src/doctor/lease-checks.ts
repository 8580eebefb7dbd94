import { DEAD_RETENTION_RANGES, type DeadRetention } from '../scripts/dead-retention';
import type { ScriptContext } from '../scripts';
import { reapExpired } from '../scripts/reap';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { repairLeases, type Lease } from '../scripts/repair-leases';
import type { RepairMode } from '../scripts/repair-mode';
import type { FindingLog } from './findings';

/**
 * Script calls one repair makes at most per kind (as many reap calls as a reaper tick); a larger
 * backlog is reported as not all repaired, and the next run goes on.
 */
const REPAIR_CALLS_MAX = 10;

/**
 * The dead retention of the doctor's reap: the most the option allows (10,000,000 jobs, no age
 * limit), since how much of dead a queue keeps is its workers' option (deadMaxJobs,
 * deadMaxAgeMs), which this process does not know. Only a dead set already past 10,000,000 jobs
 * is trimmed by it; the workers' next fail or reap trims to their own limits.
 */
const KEEP_ALL_DEAD: DeadRetention = {
  deadMaxJobs: DEAD_RETENTION_RANGES.deadMaxJobs.max,
  deadMaxAgeMs: null,
};

function ahead(lease: Lease, now: number): string {
  return lease.deadline === Infinity ? 'deadline +inf' : `deadline ${lease.deadline - now} ms ahead`;
}

/**
 * The active set's lease deadlines against the server's clock, read in one script
 * (repair-leases.lua.ts). `lease-expired`: past the deadline by more than graceMs, which means no
 * reaper has run on the queue since (every tick returns expired leases): no worker process is up,
 * or all are stuck. A lease expired within the grace is the ordinary wait for the next tick. The
 * repair is the reaper's own transition, which returns every expired lease of the queue, those
 * within the grace too. `lease-far-future`: a deadline further ahead than any lease; the repair
 * sets it to now, in the script, so the next reap returns the job.
 */
export async function checkLeases(
  ctx: ScriptContext,
  mode: RepairMode,
  log: FindingLog,
  graceMs: number,
  idsShown: number,
): Promise<void> {
  const first = await repairLeases(ctx, mode, graceMs, idsShown);
  for (const lease of first.expiredShown) {
    log.add('lease-expired', lease.id, `expired ${first.now - lease.deadline} ms ago`);
  }
  log.count('lease-expired', first.expired);
  for (const lease of first.farFutureShown) log.add('lease-far-future', lease.id, ahead(lease, first.now));
  log.count('lease-far-future', first.farFuture);
  if (mode !== 'repair') return;

  let farMended = first.farFutureRepaired;
  let farLeft = first.farFuture - farMended;
  for (let call = 1; call < REPAIR_CALLS_MAX && farLeft > 0; call++) {
    const next = await repairLeases(ctx, mode, graceMs, 1);
    farMended += next.farFutureRepaired;
    farLeft = next.farFuture - next.farFutureRepaired;
  }
  log.repaired('lease-far-future', farMended);

  if (first.expired === 0) return;
  for (let call = 0; call < REPAIR_CALLS_MAX; call++) {
    if (!(await reapExpired(ctx, SCRIPT_BATCH_MAX, KEEP_ALL_DEAD)).more) break;
  }
  // What is still expired past the grace now (a lease that expired meanwhile counts against it).
  const left = (await repairLeases(ctx, 'check', graceMs, 1)).expired;
  log.repaired('lease-expired', Math.max(0, first.expired - left));
}
