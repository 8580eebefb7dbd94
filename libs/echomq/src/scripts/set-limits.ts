import { describeValue, InvalidArgumentError } from '../errors';
import { replayWindow, type ScriptContext } from './context';
import { FLOW_LIMIT_FIELD_RANGES } from './lua/set-limits.lua';
import { newRequestId } from './request-id';
import { runScript } from './run-script';

/** At most `max` claims in any `windowMs`-long span: max 1..1,000,000, windowMs 1..86,400,000. */
export interface RateLimit {
  max: number;
  windowMs: number;
}

/**
 * The limits every worker of a queue enforces together, kept in Redis (`<p>:{q}:settings`);
 * null: no such limit.
 */
export interface FlowLimits {
  /** Claims of the whole queue. */
  rateLimit: RateLimit | null;
  /** Jobs of the queue in active at once (1..1,000,000). */
  globalConcurrency: number | null;
  /** Jobs of any one lane in active at once (1..1,000,000); a lane's own setting overrides it. */
  laneConcurrency: number | null;
  /** Claims of each lane. */
  laneRateLimit: RateLimit | null;
}

type Field = keyof typeof FLOW_LIMIT_FIELD_RANGES;

/** The settings fields behind each limit (the script and the readers use these names). */
const RATE_FIELDS = {
  rateLimit: { max: 'rm', windowMs: 'rw' },
  laneRateLimit: { max: 'lm', windowMs: 'lw' },
} as const satisfies Record<string, { max: Field; windowMs: Field }>;
const COUNT_FIELDS = { globalConcurrency: 'gc', laneConcurrency: 'lc' } as const satisfies Record<
  string,
  Field
>;

function checkedField(field: Field, value: unknown, name: string): number {
  const { min, max } = FLOW_LIMIT_FIELD_RANGES[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      `${name} must be an integer from ${min} to ${max}, got ${describeValue(value)}`,
    );
  }
  return value;
}

/** The (field, value) pairs the script writes; '' clears. Throws before anything is sent. */
function limitArgs(limits: Partial<FlowLimits>): (string | number)[] {
  if (typeof limits !== 'object' || limits === null) {
    throw new InvalidArgumentError(`limits must be an object, got ${describeValue(limits)}`);
  }
  const args: (string | number)[] = [];
  for (const [key, value] of Object.entries(limits) as [string, unknown][]) {
    if (value === undefined) continue;
    if (Object.hasOwn(RATE_FIELDS, key)) {
      const fields = RATE_FIELDS[key as keyof typeof RATE_FIELDS];
      if (value === null) {
        args.push(fields.max, '', fields.windowMs, '');
        continue;
      }
      if (typeof value !== 'object' || Object.keys(value).some((k) => k !== 'max' && k !== 'windowMs')) {
        throw new InvalidArgumentError(
          `${key} must be { max, windowMs } or null, got ${describeValue(value)}`,
        );
      }
      const rate = value as Partial<RateLimit>;
      args.push(fields.max, checkedField(fields.max, rate.max, `${key}.max`));
      args.push(fields.windowMs, checkedField(fields.windowMs, rate.windowMs, `${key}.windowMs`));
    } else if (Object.hasOwn(COUNT_FIELDS, key)) {
      const field = COUNT_FIELDS[key as keyof typeof COUNT_FIELDS];
      args.push(field, value === null ? '' : checkedField(field, value, key));
    } else {
      throw new InvalidArgumentError(`limits: unknown limit ${describeValue(key)}`);
    }
  }
  return args;
}

/**
 * Writes the limits given: null clears one, a limit left out (undefined) stays as it is; last
 * writer wins. Lanes held back by a cap that rose return to ready in the same script. Throws
 * InvalidArgumentError for a value out of range, before anything is sent; sends nothing when
 * no limit is given. Repeating the call with the same request id changes nothing more.
 */
export async function writeLimits(
  ctx: ScriptContext,
  limits: Partial<FlowLimits>,
  requestId: string = newRequestId(),
): Promise<void> {
  const args = limitArgs(limits);
  if (args.length === 0) return;
  const { keys } = ctx;
  await runScript(
    ctx,
    'emqSetLimits',
    [keys.fence, keys.reply(requestId), keys.settings, keys.wake],
    [replayWindow(ctx), args.length / 2, ...args],
  );
}

function rateOf(raw: Record<string, string>, fields: { max: Field; windowMs: Field }): RateLimit | null {
  const max = raw[fields.max];
  const windowMs = raw[fields.windowMs];
  if (max === undefined || windowMs === undefined) return null;
  return { max: Number(max), windowMs: Number(windowMs) };
}

function countOf(raw: Record<string, string>, field: Field): number | null {
  return raw[field] === undefined ? null : Number(raw[field]);
}

/** The queue's stored limits (one HGETALL); null for each limit not set. */
export async function readLimits(ctx: ScriptContext): Promise<FlowLimits> {
  const raw = await ctx.redis.hgetall(ctx.keys.settings);
  return {
    rateLimit: rateOf(raw, RATE_FIELDS.rateLimit),
    globalConcurrency: countOf(raw, COUNT_FIELDS.globalConcurrency),
    laneConcurrency: countOf(raw, COUNT_FIELDS.laneConcurrency),
    laneRateLimit: rateOf(raw, RATE_FIELDS.laneRateLimit),
  };
}
