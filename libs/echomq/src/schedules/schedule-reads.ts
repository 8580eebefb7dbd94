import { execAll } from '../connection/exec-all';
import { describeValue, InvalidArgumentError } from '../errors';
import type { ScriptContext } from '../scripts/context';
import { assertScheduleKey, parseDefinition, toScheduleView } from './schedule-definition';
import type { ScheduleListOptions, ScheduleView } from './schedule-types';

export const SCHEDULE_LIST_MAX = 1_000;
const SCHEDULE_LIST_DEFAULT = 100;
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

/** The views of these keys (left out: keys with no definition), in one pipelined round trip. */
async function viewsOf<T>(ctx: ScriptContext, keys: readonly string[]): Promise<ScheduleView<T>[]> {
  if (keys.length === 0) return [];
  const { redis, keys: k } = ctx;
  const [definitions, nextIds] = (await execAll(
    redis
      .multi()
      .hmget(k.schedulers, ...keys)
      .hmget(k.schedulerNext, ...keys),
    `The schedules of ${k.queue}`,
  )) as [(string | null)[], (string | null)[]];
  const scores = nextIds.some((id) => id !== null)
    ? ((await execAll(
        nextIds.reduce((batch, id) => batch.zscore(k.schedule, id ?? ''), redis.multi()),
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

/** A page of schedules by key (byte order), after `after`, at most `limit`. */
export async function listSchedules<T>(
  ctx: ScriptContext,
  options: ScheduleListOptions = {},
): Promise<ScheduleView<T>[]> {
  const limit = options.limit ?? SCHEDULE_LIST_DEFAULT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > SCHEDULE_LIST_MAX) {
    throw new InvalidArgumentError(
      `limit must be an integer from 1 to ${SCHEDULE_LIST_MAX}, got ${describeValue(limit)}`,
    );
  }
  const after = options.after === undefined ? undefined : assertScheduleKey(options.after);
  const page = (await scheduleKeys(ctx))
    .filter((key) => after === undefined || key > after)
    .sort()
    .slice(0, limit);
  return viewsOf<T>(ctx, page);
}
