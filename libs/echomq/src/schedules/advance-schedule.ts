import { execAll } from '../connection/exec-all';
import type { ScriptContext } from '../scripts/context';
import { repeatUntilKnown } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { advanceScheduleScript } from '../scripts/schedules';
import { nextRunAt, timeMs } from './next-run';
import type { ScheduleDeps } from './schedule-deps';
import { definitionDigest, parseDefinition } from './schedule-definition';

/**
 * 'advanced': a new next occurrence waits; 'stale': another caller advanced it first, or the
 * schedule changed or went (nothing written); 'ended': the cron pattern has no run left, and
 * the schedule was removed (with `replace`: nothing written, the last run still waits).
 */
export type AdvanceOutcome = 'advanced' | 'stale' | 'ended';

/**
 * Moves a schedule on from `expectedId`, its next occurrence as the caller saw it (null: it
 * has none): reads the definition, the occurrence's planned run-at and the server clock in one
 * pipeline, computes the next run-at, and sets it with advance-schedule's compare-and-set. With
 * `replace`, the expected occurrence still waits and is dropped unrun (the 'skip' policy).
 * `traceContext` is the expected occurrence's, as a worker's claim read it: the new occurrence
 * carries it should the expected one's row be gone by then (see advance-schedule.lua.ts).
 *
 * A pipeline, not a MULTI: a full Redis refuses every command queued in a MULTI, reads too,
 * which turned the advance's own typed refusal into a bare EXECABORT. The reads need no one
 * instant: the script sets nothing unless scheduler-next still is `expectedId` and the stored
 * definition still has the digest read here, and an occurrence's planned run-at never changes
 * while it is the next one, so a read made stale by a concurrent change ends in 'stale'.
 */
export async function advanceSchedule(
  ctx: ScriptContext,
  key: string,
  expectedId: string | null,
  deps: Pick<ScheduleDeps, 'mintIds' | 'repeat'>,
  replace = false,
  traceContext?: string,
): Promise<AdvanceOutcome> {
  const { redis, keys } = ctx;
  const batch = redis.pipeline().hget(keys.schedulers, key).hget(keys.schedulerNext, key).time();
  if (expectedId !== null) batch.hget(keys.job(expectedId), 'sa').zscore(keys.schedule, expectedId);
  const [stored, current, time, plannedField, score] = await execAll(
    batch,
    `The schedule read of ${keys.queue}`,
  );
  if (typeof stored !== 'string' || (current ?? null) !== expectedId) return 'stale';
  const definition = parseDefinition(stored);
  const planned = plannedField ?? score;
  const runAt = nextRunAt(definition.spec, planned == null ? null : Number(planned), timeMs(time));
  if (runAt === null && replace) return 'ended';
  const [id] = await deps.mintIds(1, ctx.keys.queue);
  const requestId = newRequestId();
  // Run-at 0: no run left, the script ends the schedule (same compare-and-set).
  const call = {
    key,
    expectedId,
    digest: definitionDigest(stored),
    id,
    runAtMs: runAt ?? 0,
    replace,
    ...(traceContext === undefined ? {} : { traceContext }),
  };
  const reply = await repeatUntilKnown(() => advanceScheduleScript(ctx, call, requestId), deps.repeat());
  if (reply !== 'OK') return 'stale';
  return runAt === null ? 'ended' : 'advanced';
}
