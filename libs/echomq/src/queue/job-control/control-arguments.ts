import { describeValue, InvalidArgumentError } from '../../errors';

/**
 * The checks of job-control arguments: each refuses with InvalidArgumentError naming the
 * argument, before anything is sent (so a refused call writes nothing).
 */

// The options-bag check lives with the other option checks: browse, enqueue and listSchedules use it too.
export { optionsOf } from '../../option-checks';

export function integerIn(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgumentError(
      `${name} must be an integer from ${min.toLocaleString('en-US')} to ${max.toLocaleString('en-US')}, got ${describeValue(value)}`,
    );
  }
  return value;
}

export function booleanOr(value: unknown, name: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean')
    throw new InvalidArgumentError(`${name} must be true or false, got ${describeValue(value)}`);
  return value;
}
