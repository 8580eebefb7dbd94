import { InvalidArgumentError, InvalidOptionError } from '../errors';
import {
  checkFields,
  checkInteger,
  checkRecord,
  optionPath,
  refusalDetail,
  refuse,
  type OptionCheck,
} from '../option-checks';
import { LANE_SETTING_FIELD_RANGES } from '../scripts/lua/set-lane.lua';
import { FLOW_LIMIT_FIELD_RANGES } from '../scripts/lua/set-limits.lua';
import type { FlowLimits, RateLimit } from '../scripts/set-limits';

/**
 * The limits every worker of a queue enforces together (docs/flow-control.md). They are kept
 * in Redis (`<p>:{q}:settings`), not per process: a per-worker limit is not a limit. The same
 * checks serve the queue options at boot (InvalidOptionError naming the option) and the admin
 * call QueueService.setLimits (InvalidArgumentError), so both accept exactly the same values.
 */
export const FLOW_LIMIT_KEYS = [
  'rateLimit',
  'globalConcurrency',
  'laneConcurrency',
  'laneRateLimit',
] as const;

export type FlowLimitKey = (typeof FLOW_LIMIT_KEYS)[number];

/**
 * The documented range of each shared limit (docs/options.md): the ranges the settings script
 * itself enforces, so a value accepted here is never refused halfway by Redis.
 */
export const FLOW_LIMIT_RANGES = {
  rateMax: FLOW_LIMIT_FIELD_RANGES.rm,
  rateWindowMs: FLOW_LIMIT_FIELD_RANGES.rw,
  globalConcurrency: FLOW_LIMIT_FIELD_RANGES.gc,
  laneConcurrency: FLOW_LIMIT_FIELD_RANGES.lc,
} as const;

/** The documented range of a lane's own settings (QueueService.setLane), as the script enforces them. */
export const LANE_SETTING_RANGES = {
  weight: LANE_SETTING_FIELD_RANGES.w,
  concurrency: LANE_SETTING_FIELD_RANGES.k,
} as const;

/** `null` clears a limit; every other value is checked. */
function nullOr(check: OptionCheck): OptionCheck {
  return (value, option) => {
    if (value !== null) check(value, option);
  };
}

/** Checks a `{ max, windowMs }` rate limit; both fields are required. */
export function checkRateLimit(value: unknown, option: string): RateLimit {
  const rate = checkRecord(value, option);
  for (const key of Object.keys(rate)) {
    if (key !== 'max' && key !== 'windowMs') {
      refuse(optionPath(option, key), 'is not a field of a rate limit; known: max, windowMs');
    }
  }
  checkInteger(rate.max, optionPath(option, 'max'), FLOW_LIMIT_RANGES.rateMax);
  checkInteger(rate.windowMs, optionPath(option, 'windowMs'), FLOW_LIMIT_RANGES.rateWindowMs);
  return value as RateLimit;
}

/** The check of each shared limit, as queue options (QUEUE_OPTION_CHECKS takes these). */
export const FLOW_LIMIT_CHECKS: { readonly [K in FlowLimitKey]: OptionCheck } = {
  rateLimit: nullOr(checkRateLimit),
  globalConcurrency: nullOr((value, option) =>
    checkInteger(value, option, FLOW_LIMIT_RANGES.globalConcurrency),
  ),
  laneConcurrency: nullOr((value, option) => checkInteger(value, option, FLOW_LIMIT_RANGES.laneConcurrency)),
  laneRateLimit: nullOr(checkRateLimit),
};

/**
 * The shared limits some layer configures, later layers winning (module defaults <
 * queues.<q> < @Processor). A limit no layer gives is left out, so it leaves Redis as it is;
 * a `null` is kept: that layer clears it.
 */
export function configuredLimits(...layers: (Partial<FlowLimits> | undefined)[]): Partial<FlowLimits> {
  const configured: Record<string, unknown> = {};
  for (const layer of layers) {
    for (const key of FLOW_LIMIT_KEYS) {
      if (layer?.[key] !== undefined) configured[key] = layer[key];
    }
  }
  return configured;
}

/** An admin call's bad value is a bad argument, named by the same path an option would be. */
export function asArgumentError(error: unknown): unknown {
  if (!(error instanceof InvalidOptionError)) return error;
  return new InvalidArgumentError(`${error.option} ${refusalDetail(error)}`);
}

/**
 * Refuses a key an admin call does not take, saying what it is not (`concurrency is not a
 * limit`): "not an option" would send the caller to the module options.
 */
export function refuseUnknownKeys(
  record: Record<string, unknown>,
  known: readonly string[],
  what: string,
): void {
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) {
      throw new InvalidArgumentError(`${key} is not ${what}; known: ${known.join(', ')}`);
    }
  }
}

/**
 * Checks the limits of an admin call (QueueService.setLimits) before anything is sent:
 * unknown keys and values out of range are refused with InvalidArgumentError.
 */
export function assertFlowLimits(limits: unknown): Partial<FlowLimits> {
  try {
    const record = checkRecord(limits, 'limits');
    refuseUnknownKeys(record, FLOW_LIMIT_KEYS, 'a limit');
    checkFields(record, FLOW_LIMIT_CHECKS, '');
  } catch (error) {
    throw asArgumentError(error);
  }
  return configuredLimits(limits as Partial<FlowLimits>);
}

/** How a limit reads in a log line: `100 per 1000 ms`, `5`, or `none` (cleared). */
export function describeLimit(value: RateLimit | number | null | undefined): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'number') return String(value);
  return `${value.max} per ${value.windowMs} ms`;
}

export function sameLimit(a: RateLimit | number | null, b: RateLimit | number | null): boolean {
  if (a === null || b === null || typeof a === 'number' || typeof b === 'number') return a === b;
  return a.max === b.max && a.windowMs === b.windowMs;
}
