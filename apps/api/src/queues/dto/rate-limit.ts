import { ApiProperty } from '@nestjs/swagger';
import { FLOW_LIMIT_RANGES } from '@app/echomq/internal';
import { ValidateBy } from 'class-validator';

/**
 * Most claims a rate limit allows per window, and most jobs a concurrency cap allows: the
 * library's ranges (every one starts at 1), so the api and the library cannot disagree.
 */
export const LIMIT_COUNT_MAX = FLOW_LIMIT_RANGES.rateMax.max;
/** Longest rate window (the library's range). */
export const RATE_WINDOW_MAX_MS = FLOW_LIMIT_RANGES.rateWindowMs.max;

/** At most `max` claims in any `windowMs`-long span, all workers together. */
export class RateLimitDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: LIMIT_COUNT_MAX, example: 100 })
  readonly max!: number;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: RATE_WINDOW_MAX_MS, example: 1000 })
  readonly windowMs!: number;
}

const RATE_LIMIT_FIELDS: Readonly<Record<keyof RateLimitDto, number>> = {
  max: LIMIT_COUNT_MAX,
  windowMs: RATE_WINDOW_MAX_MS,
};

/** What is wrong with a rate limit value (null is fine: it clears the limit), or undefined. */
export function rateLimitProblem(property: string, value: unknown): string | undefined {
  if (value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    return `${property} must be an object { max, windowMs } or null to clear it`;
  }
  const record = value as Record<string, unknown>;
  const unknown = Object.keys(record).find((key) => !Object.hasOwn(RATE_LIMIT_FIELDS, key));
  if (unknown !== undefined) return `property ${property}.${unknown} should not exist`;
  for (const [field, max] of Object.entries(RATE_LIMIT_FIELDS)) {
    const n = record[field];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1 || n > max) {
      return `${property}.${field} must be an integer from 1 to ${max}`;
    }
  }
  return undefined;
}

/**
 * A rate limit or null, checked as one rule with a message that names the nested field
 * ("rateLimit.windowMs must be ..."). Checked here rather than with ValidateNested, which
 * cannot take null as "clear it".
 */
export function IsRateLimitOrNull(): PropertyDecorator {
  return ValidateBy({
    name: 'isRateLimitOrNull',
    validator: {
      validate: (value: unknown, args) =>
        rateLimitProblem(args?.property ?? 'rateLimit', value) === undefined,
      defaultMessage: (args) =>
        rateLimitProblem(args?.property ?? 'rateLimit', args?.value) ?? 'rateLimit is invalid',
    },
  });
}
