import { describeValue, InvalidArgumentError } from '../../errors';

/**
 * The checks of job-control arguments: each refuses with InvalidArgumentError naming the
 * argument, before anything is sent (so a refused call writes nothing).
 */

/** An options object (or undefined), with no key outside `known`: a misspelt option is refused, not ignored. */
export function optionsOf<T extends object>(
  value: T | undefined,
  known: readonly string[],
  what: string,
): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`${what} must be an object, got ${describeValue(value)}`);
  }
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`${what} takes ${known.join(', ')}; unknown: ${unknown.join(', ')}`);
  }
  return value;
}

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
