import { DEAD_RETENTION_RANGES, type DeadRetention } from '../scripts/dead-retention';
import type { ScriptContext } from '../scripts';
import { reapExpired } from '../scripts/reap';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import type { RepairMode } from '../scripts/repair-mode';
import type { FindingLog } from './findings';

/**
 * Reap calls one repair makes at most (as many as a reaper tick); a larger backlog is
 * reported as not all repaired, and the next run goes on.
 */
const REAP_CALLS_MAX = 10;

/**
 * The doctor's reap trims no dead job: how much of dead a queue keeps is its workers' option
 * (deadMaxJobs, deadMaxAgeMs), which this process does not know; their next fail or reap trims.
 */
const KEEP_ALL_DEAD: DeadRetention = {
  deadMaxJobs: DEAD_RETENTION_RANGES.deadMaxJobs.max,
  deadMaxAgeMs: null,
};

/**
 * Active jobs whose lease deadline passed more than graceMs ago on the server's clock: every
 * reaper tick returns expired leases, so these mean no reaper has run on the queue since
 * (no worker process is up, or all of them are stuck). A lease that expired within the grace
 * is the ordinary wait for the next tick and is not reported. The server time is read first and
 * the scores after it, so a lease extended meanwhile is never reported. The repair is the
 * reaper's own transition.
 */
export async function checkLeases(
  ctx: ScriptContext,
  mode: RepairMode,
  log: FindingLog,
  graceMs: number,
  idsShown: number,
): Promise<void> {
  const { redis, keys } = ctx;
  const [seconds, micros] = await redis.time();
  const nowMs = Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
  const before = nowMs - graceMs;
  const count = await redis.zcount(keys.active, '-inf', before);
  if (count === 0) return;
  const shown = await redis.zrangebyscore(keys.active, '-inf', before, 'WITHSCORES', 'LIMIT', 0, idsShown);
  for (let i = 0; i < shown.length; i += 2) {
    log.add('lease-expired', shown[i], `expired ${nowMs - Number(shown[i + 1])} ms ago`);
  }
  log.count('lease-expired', count);
  if (mode !== 'repair') return;
  for (let call = 0; call < REAP_CALLS_MAX; call++) {
    if (!(await reapExpired(ctx, SCRIPT_BATCH_MAX, KEEP_ALL_DEAD)).more) break;
  }
  // (what is left of them past the calls' bound; the scores cannot have moved back meanwhile)
  const left = await redis.zcount(keys.active, '-inf', before);
  log.repaired('lease-expired', Math.max(0, count - left));
}
