import { execAll } from '../connection/exec-all';
import { InvalidArgumentError } from '../errors';
import type { JobId } from '../ids';
import type { ScriptContext } from '../scripts/context';
import { repeatUntilKnown } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { upsertScheduleScript } from '../scripts/schedules';
import { nextRunAt, timeMs } from './next-run';
import type { ScheduleDeps } from './schedule-deps';
import { assertScheduleKey, buildDefinition, parseDefinition } from './schedule-definition';
import type { ScheduleOptions, ScheduleSpec, ScheduleTemplate, UpsertScheduleResult } from './schedule-types';

/**
 * Creates or changes a schedule: checks everything before anything is sent, reads the server
 * clock, computes the first run-at, mints the occurrence's id, and lets upsert-schedule decide
 * (unchanged / created / updated) atomically, so concurrent upserts of one key leave exactly
 * one next occurrence. A change that keeps the spec keeps the waiting occurrence's run-at
 * (a new template or missed policy does not move the next run).
 */
export async function upsertSchedule(
  ctx: ScriptContext,
  key: string,
  spec: ScheduleSpec & ScheduleOptions,
  template: ScheduleTemplate | undefined,
  deps: ScheduleDeps,
): Promise<UpsertScheduleResult> {
  assertScheduleKey(key);
  const { definition, text } = buildDefinition(spec, template, deps.payloadLimitBytes);
  const { redis, keys } = ctx;
  const [stored, waitingId, time] = await execAll(
    redis.multi().hget(keys.schedulers, key).hget(keys.schedulerNext, key).time(),
    `The schedule read of ${keys.queue}`,
  );
  let runAt: number | null = null;
  if (typeof stored === 'string' && typeof waitingId === 'string' && sameSpec(stored, definition.spec)) {
    const score = await redis.zscore(keys.schedule, waitingId);
    if (score !== null) runAt = Number(score);
  }
  runAt ??= nextRunAt(definition.spec, null, timeMs(time));
  if (runAt === null) throw new InvalidArgumentError(`Schedule ${key} never runs after now`);
  const [id] = await deps.mintIds(1);
  await deps.registerIfDue(keys.queue);
  const requestId = newRequestId();
  const at = runAt;
  const reply = await repeatUntilKnown(
    () => upsertScheduleScript(ctx, { key, definition: text, id, runAtMs: at }, requestId),
    deps.repeat(),
  );
  return { outcome: reply.outcome, nextRunAt: new Date(reply.runAtMs), nextId: reply.id as JobId };
}

function sameSpec(stored: string, spec: object): boolean {
  try {
    return JSON.stringify(parseDefinition(stored).spec) === JSON.stringify(spec);
  } catch {
    return false;
  }
}
