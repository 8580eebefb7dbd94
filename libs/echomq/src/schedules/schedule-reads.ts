import { execAll } from '../connection/exec-all';
import { describeValue, InvalidArgumentError } from '../errors';
import { optionsOf } from '../option-checks';
import type { ScriptContext } from '../scripts/context';
import { assertScheduleKey, parseDefinition, toScheduleView } from './schedule-definition';
import type { ScheduleListOptions, ScheduleView } from './schedule-types';

export const SCHEDULE_LIST_MAX = 1_000;
export const SCHEDULE_LIST_DEFAULT = 100;
/** Keys read per HSCAN call: each call is bounded, whatever the number of schedules. */
const SCAN_COUNT = 500;

/** Every schedule key of a queue, from scheduler-next (small values: ids), chunk by chunk. */
export async function scheduleKeys(ctx: ScriptContext): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, flat] = await ctx.redis.hscan(ctx.keys.schedulerNext, cursor, 'COUNT', SCAN_COUNT);
    cursor = next;
    for (let i = 0; i < flat.length; i += 2) keys.push(flat[i]);
  } while (cursor !== '0');
  return keys;
}

/**
 * The views of these keys (left out: keys with no definition), in two pipelined round trips.
 * Pipelines, not MULTIs: a full Redis refuses every command queued in a MULTI, reads too, and
 * the schedules are what an operator reads while finding out why Redis filled. Nothing here
 * needs one instant: the next occurrence's run-at is read a round trip after its id in any
 * case, and a schedule upserted or advanced between two reads shows its state of one moment
 * or the next, as a read a moment later would.
 */
async function viewsOf<T>(ctx: ScriptContext, keys: readonly string[]): Promise<ScheduleView<T>[]> {
  if (keys.length === 0) return [];
  const { redis, keys: k } = ctx;
  const [definitions, nextIds] = (await execAll(
    redis
      .pipeline()
      .hmget(k.schedulers, ...keys)
      .hmget(k.schedulerNext, ...keys),
    `The schedules of ${k.queue}`,
  )) as [(string | null)[], (string | null)[]];
  const scores = nextIds.some((id) => id !== null)
    ? ((await execAll(
        nextIds.reduce((batch, id) => batch.zscore(k.schedule, id ?? ''), redis.pipeline()),
        `The next occurrences of ${k.queue}`,
      )) as (string | null)[])
    : nextIds.map(() => null);
  const views: ScheduleView<T>[] = [];
  keys.forEach((key, index) => {
    const text = definitions[index];
    if (text === null) return;
    const score = nextIds[index] === null ? null : scores[index];
    views.push(
      toScheduleView<T>(key, parseDefinition(text), nextIds[index], score == null ? null : Number(score)),
    );
  });
  return views;
}

export async function getSchedule<T>(ctx: ScriptContext, key: string): Promise<ScheduleView<T> | undefined> {
  assertScheduleKey(key);
  const [view] = await viewsOf<T>(ctx, [key]);
  return view;
}

/**
 * A page of schedules by key (byte order), after `after`, at most `limit`. Options other than
 * a plain object of these two, or a field set to null, throw InvalidArgumentError first.
 */
export async function listSchedules<T>(
  ctx: ScriptContext,
  options: ScheduleListOptions = {},
): Promise<ScheduleView<T>[]> {
  const checked = optionsOf(options, ['after', 'limit'], 'listSchedules options');
  const limit = checked.limit === undefined ? SCHEDULE_LIST_DEFAULT : checked.limit;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > SCHEDULE_LIST_MAX) {
    throw new InvalidArgumentError(
      `limit must be an integer from 1 to ${SCHEDULE_LIST_MAX}, got ${describeValue(limit)}`,
    );
  }
  const after = checked.after === undefined ? undefined : assertScheduleKey(checked.after);
  const page = (await scheduleKeys(ctx))
    .filter((key) => after === undefined || key > after)
    .sort()
    .slice(0, limit);
  return viewsOf<T>(ctx, page);
}
