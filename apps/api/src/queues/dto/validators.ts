import { isValidLaneName, serialiseBackoff } from '@app/echomq/internal';
import { isRFC3339, ValidateBy, ValidateIf, type ValidationOptions } from 'class-validator';

/**
 * Optional, but not nullable: an absent field is skipped, while `null` is validated
 * (and fails) like any other wrong type. class-validator's IsOptional lets null through,
 * which would silently turn `"delayMs": null` into "no delay".
 */
export function Optional(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/**
 * An integer in [min, max], checked as one rule so the message states the whole
 * contract ("delayMs must be an integer from 0 to ...") whatever was wrong with it.
 */
export function IsIntegerInRange(min: number, max: number): PropertyDecorator {
  return ValidateBy({
    name: 'isIntegerInRange',
    constraints: [min, max],
    validator: {
      validate: (value: unknown) =>
        typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max,
      defaultMessage: (args) => `${args?.property ?? 'value'} must be an integer from ${min} to ${max}`,
    },
  });
}

/** A string of min to max characters (UTF-16 code units, as the library counts them). */
export function IsStringOfLength(min: number, max: number): PropertyDecorator {
  return ValidateBy({
    name: 'isStringOfLength',
    constraints: [min, max],
    validator: {
      validate: (value: unknown) => typeof value === 'string' && value.length >= min && value.length <= max,
      defaultMessage: (args) =>
        `${args?.property ?? 'value'} must be a string of ${min} to ${max} characters`,
    },
  });
}

/** The property must be present; any JSON value, null included, is accepted. */
export function IsPresent(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isPresent',
      validator: {
        validate: (value: unknown) => value !== undefined,
        defaultMessage: (args) => `${args?.property ?? 'data'} is required (any JSON value, null included)`,
      },
    },
    options,
  );
}

/** Latest instant accepted: the end of year 9999, the last one an ISO 8601 string can name. */
export const RUN_AT_MAX_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/** Date.parse rolls 2030-02-30 over into March; a calendar date must name a real day. */
function isRealCalendarDate(text: string): boolean {
  const [year, month, day] = text.slice(0, 10).split('-').map(Number);
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** A run-at as milliseconds since the epoch, or undefined when it is neither accepted form. */
export function runAtToMs(value: unknown): number | undefined {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string' && isRFC3339(value) && isRealCalendarDate(value)) ms = Date.parse(value);
  else return undefined;
  return Number.isSafeInteger(ms) && ms >= 0 && ms <= RUN_AT_MAX_MS ? ms : undefined;
}

/**
 * An RFC 3339 date-time (with its offset, so it means one instant) or epoch
 * milliseconds, from 1970 to the end of year 9999.
 */
export function IsRunAt(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRunAt',
      validator: {
        validate: (value: unknown) => runAtToMs(value) !== undefined,
        defaultMessage: (args) =>
          `${args?.property ?? 'runAt'} must be an RFC 3339 date-time with an offset (e.g. 2030-01-01T00:00:00Z) or integer epoch milliseconds, from 1970 to 9999`,
      },
    },
    options,
  );
}

/**
 * A job's own backoff: a fixed or exponential policy within the ranges of the queue option
 * (the library's own check, so the api and the library refuse the same values and say why).
 */
export function IsJobBackoff(): PropertyDecorator {
  const problem = (value: unknown): string | undefined => {
    try {
      serialiseBackoff(value);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };
  return ValidateBy({
    name: 'isJobBackoff',
    validator: {
      validate: (value: unknown) =>
        value !== null && typeof value === 'object' && problem(value) === undefined,
      defaultMessage: (args) =>
        (args?.value !== null && typeof args?.value === 'object' ? problem(args.value) : undefined) ??
        'backoff must be an object: { type: "fixed", delayMs } or { type: "exponential", delayMs, maxDelayMs?, jitter? }',
    },
  });
}

/** A lane name by the keyspace's own rule, so the api and the library accept the same names. */
export function IsLaneName(): PropertyDecorator {
  return ValidateBy({
    name: 'isLaneName',
    validator: {
      validate: (value: unknown) => isValidLaneName(value),
      defaultMessage: (args) =>
        `${args?.property ?? 'lane'} must be 1 to 64 characters from A-Z a-z 0-9 _ . : @ + = -`,
    },
  });
}

/**
 * An integer in [min, max] or null, for settings where null means "clear it". Absent is
 * handled by Optional(); the message names both accepted forms.
 */
export function IsIntegerInRangeOrNull(min: number, max: number): PropertyDecorator {
  return ValidateBy({
    name: 'isIntegerInRangeOrNull',
    constraints: [min, max],
    validator: {
      validate: (value: unknown) =>
        value === null ||
        (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max),
      defaultMessage: (args) =>
        `${args?.property ?? 'value'} must be an integer from ${min} to ${max}, or null to clear it`,
    },
  });
}

/**
 * Query strings are text: only plain digits become a number; anything else stays text and
 * fails the integer rule that follows, so "1.5" or "9e0" are refused rather than rounded.
 */
export function digitsToNumber({ value }: { value: unknown }): unknown {
  return typeof value === 'string' && /^\d{1,7}$/.test(value) ? Number(value) : value;
}
