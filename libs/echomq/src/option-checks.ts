import { describeValue, InvalidArgumentError, InvalidOptionError } from './errors';

/**
 * The checks every module, queue and processor option goes through at boot
 * (docs/options.md). Each refuses with InvalidOptionError naming the option by its
 * path (`reaper.batch`, `queues.emails.concurrency`), so a bad configuration stops
 * the application before a script can fail halfway on a value it cannot use.
 * The options bag of a call (`optionsOf`) is checked the same way, as an argument.
 */
export interface Range {
  readonly min: number;
  readonly max: number;
}

/** Checks one option's value; `option` is its full path, for the error. */
export type OptionCheck = (value: unknown, option: string) => void;

export function optionPath(parent: string, key: string): string {
  return parent === '' ? key : `${parent}.${key}`;
}

export function refuse(option: string, message: string): never {
  throw new InvalidOptionError(option, message);
}

/** The text after "Option <name>: ", for callers that put the option in a message of their own. */
export function refusalDetail(error: InvalidOptionError): string {
  const prefix = `Option ${error.option}: `;
  return error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
}

const format = (n: number): string => n.toLocaleString('en-US');

export function checkInteger(value: unknown, option: string, range: Range): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < range.min || value > range.max) {
    refuse(
      option,
      `must be an integer from ${format(range.min)} to ${format(range.max)}, got ${describeValue(value)}`,
    );
  }
  return value;
}

export function checkNumber(value: unknown, option: string, range: Range): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < range.min || value > range.max) {
    refuse(option, `must be a number from ${range.min} to ${range.max}, got ${describeValue(value)}`);
  }
  return value;
}

export function checkRecord(value: unknown, option: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    refuse(option, `must be an object, got ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Refuses keys nobody reads: a misspelt option would otherwise be ignored without a word. */
export function checkKnownKeys(
  record: Record<string, unknown>,
  known: readonly string[],
  parent: string,
): void {
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) {
      refuse(optionPath(parent, key), `is not an option here; known: ${known.join(', ')}`);
    }
  }
}

/**
 * Runs each check on the value it names, skipping values left undefined (an unset
 * environment variable means "use the default"). The checks object is typed against
 * the options interface, so a new option cannot be added without its check.
 */
export function checkFields(
  record: Record<string, unknown>,
  checks: Readonly<Record<string, OptionCheck>>,
  parent: string,
): void {
  checkKnownKeys(record, Object.keys(checks), parent);
  for (const [key, check] of Object.entries(checks)) {
    if (record[key] !== undefined) check(record[key], optionPath(parent, key));
  }
}

/**
 * An object literal (or Object.create(null)): not an array, a Date, a Map or a class instance,
 * whose fields would be read in some paths and not in others (an inherited field survives
 * `enqueueMany` but not a `{ ...options }` spread).
 */
function isPlainObject(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * A call's options bag (browse, clean, enqueue, ...): undefined for "none", else a plain object
 * with no key outside `known`. Anything else is refused with InvalidArgumentError before a
 * command is sent: a misspelt option is refused, not ignored, and `null`, an array, a function
 * or a number is a caller's mistake, not a way to say "no options". Its fields are the caller's
 * to check (each call knows what null means for its own fields).
 */
export function optionsOf<T extends object>(
  value: T | undefined,
  known: readonly string[],
  what: string,
): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidArgumentError(`${what} must be an object, got ${describeValue(value)}`);
  }
  if (!isPlainObject(value)) {
    const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'class instance';
    throw new InvalidArgumentError(`${what} must be a plain object, got a ${kind}`);
  }
  const unknown = Object.keys(value).filter((key) => !known.includes(key));
  if (unknown.length > 0) {
    throw new InvalidArgumentError(`${what} takes ${known.join(', ')}; unknown: ${unknown.join(', ')}`);
  }
  return value;
}
