import { InvalidArgumentError } from '../errors';
import type { JobId } from '../ids';
import { DEFAULT_LANE } from '../keyspace';
import type { ScriptContext } from '../scripts/context';
import { repeatUntilKnown } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { upsertScheduleScript } from '../scripts/schedules';
import { nextRunAt, timeMs } from './next-run';
import { producerTracing, type StampTrace } from '../tracing/producer-tracing';
import type { ScheduleDeps } from './schedule-deps';
import { assertScheduleKey, buildDefinition } from './schedule-definition';
import type { ScheduleOptions, ScheduleSpec, ScheduleTemplate, UpsertScheduleResult } from './schedule-types';

/**
 * Creates or changes a schedule: checks everything before anything is sent, reads the server
 * clock, computes the run-at a new timing starts from, mints the occurrence's id, and lets
 * upsert-schedule decide (unchanged / created / updated) atomically from where the current next
 * occurrence is at that moment, so concurrent upserts of one key leave exactly one next
 * occurrence. The script, not this function, keeps the waiting occurrence's run-at when the
 * timing is the same (a new template or missed policy does not move the next run): a value read
 * here could be stale by the time the script runs (a run promoted and advanced in between).
 * With tracing on, the upsert is a publish span (tracing/producer-tracing.ts) whose context the
 * occurrence it creates carries, and every occurrence after it (docs/tracing.md).
 */
export async function upsertSchedule(
  ctx: ScriptContext,
  key: string,
  spec: ScheduleSpec & ScheduleOptions,
  template: ScheduleTemplate | undefined,
  deps: ScheduleDeps,
): Promise<UpsertScheduleResult> {
  if (!deps.tracing) return upsertOnce(ctx, key, spec, template, deps);
  // The span names the occurrence that goes on: the new one, or (unchanged, or a run in
  // progress) the one that was there.
  return producerTracing().publish(
    ctx.keys.queue,
    1,
    (stamp) => upsertOnce(ctx, key, spec, template, deps, stamp),
    (result) => [{ id: result.nextId, outcome: result.outcome }],
  );
}

async function upsertOnce(
  ctx: ScriptContext,
  key: string,
  spec: ScheduleSpec & ScheduleOptions,
  template: ScheduleTemplate | undefined,
  deps: ScheduleDeps,
  stamp?: StampTrace,
): Promise<UpsertScheduleResult> {
  assertScheduleKey(key);
  const { definition, text } = buildDefinition(spec, template, deps.payloadLimitBytes);
  const { redis, keys } = ctx;
  const runAt = nextRunAt(definition.spec, null, timeMs(await redis.time()));
  if (runAt === null) throw new InvalidArgumentError(`Schedule ${key} never runs after now`);
  const [id] = await deps.mintIds(1, keys.queue);
  await deps.registerIfDue(keys.queue);
  const traceContext = stamp?.(id, definition.template.lane ?? DEFAULT_LANE);
  const requestId = newRequestId();
  const call = { key, definition: text, id, runAtMs: runAt, ...(traceContext ? { traceContext } : {}) };
  const reply = await repeatUntilKnown(() => upsertScheduleScript(ctx, call, requestId), deps.repeat());
  return { outcome: reply.outcome, nextRunAt: new Date(reply.runAtMs), nextId: reply.id as JobId };
}
