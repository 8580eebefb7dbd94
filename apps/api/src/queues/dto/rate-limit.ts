import { ApiProperty } from '@nestjs/swagger';
import { FLOW_LIMIT_RANGES } from '@app/echomq/internal';
import { ValidateBy } from 'class-validator';

/** Claims a rate limit allows per window, and its window: the library's ranges, so the api and the library cannot disagree. */
const RATE_MAX = FLOW_LIMIT_RANGES.rateMax;
const RATE_WINDOW_MS = FLOW_LIMIT_RANGES.rateWindowMs;

/** At most `max` claims in any `windowMs`-long span, all workers together. */
export class RateLimitDto {
  @ApiProperty({ type: 'integer', minimum: RATE_MAX.min, maximum: RATE_MAX.max, example: 100 })
  readonly max!: number;

  @ApiProperty({ type: 'integer', minimum: RATE_WINDOW_MS.min, maximum: RATE_WINDOW_MS.max, example: 1000 })
  readonly windowMs!: number;
}

const RATE_LIMIT_FIELDS: Readonly<
  Record<keyof RateLimitDto, { readonly min: number; readonly max: number }>
> = {
  max: RATE_MAX,
  windowMs: RATE_WINDOW_MS,
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
  for (const [field, { min, max }] of Object.entries(RATE_LIMIT_FIELDS)) {
    const n = record[field];
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) {
      return `${property}.${field} must be an integer from ${min} to ${max}`;
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
