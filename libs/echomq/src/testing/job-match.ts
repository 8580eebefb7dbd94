import type { JobId } from '../ids';
import type { JobView } from '../queue/job-view';

/**
 * A partial description of a value, matched the way `expect(...).toMatchObject` does:
 * an object matches when every key it gives matches (other keys, at any depth, are
 * ignored); an array when it has the same length and each element matches; a string
 * also by a RegExp; a Date by its time; anything else by Object.is.
 */
export type Pattern<T> = T extends JobId
  ? string | RegExp
  : T extends string
    ? T | RegExp
    : T extends Date
      ? Date
      : T extends readonly (infer E)[]
        ? readonly Pattern<E>[]
        : T extends (...args: never[]) => unknown
          ? T
          : T extends object
            ? { readonly [K in keyof T]?: Pattern<T[K]> }
            : T;

/**
 * Which jobs an expectation looks for: a pattern over the job's view (usually `name`
 * and `data`, e.g. `{ name: 'welcome', data: { to: 'a@example.com' } }`), or a predicate.
 */
export type JobMatch<D = unknown, R = unknown> = Pattern<JobView<D, R>> | ((job: JobView<D, R>) => boolean);

/** Where a value differs from its pattern: the first difference found. */
export interface Mismatch {
  /** The path of the difference from the view, e.g. `data.items[0].sku`. */
  readonly path: string;
  readonly expected: unknown;
  readonly actual: unknown;
}

const MISSING = Symbol('missing');
const SHOWN_MAX = 160;

/** undefined when the job matches; otherwise its first difference (a predicate reports none). */
export function mismatchOf<D, R>(
  job: JobView<D, R>,
  match: JobMatch<D, R> | undefined,
): Mismatch | undefined {
  if (match === undefined) return undefined;
  if (typeof match === 'function') {
    return match(job) ? undefined : { path: '', expected: match, actual: job };
  }
  return differs(job, match, '');
}

function differs(actual: unknown, expected: unknown, path: string): Mismatch | undefined {
  const mismatch: Mismatch = { path, expected, actual };
  if (expected instanceof RegExp) {
    // A copy, so that a /g pattern's lastIndex neither carries over nor changes the caller's.
    return typeof actual === 'string' && new RegExp(expected).test(actual) ? undefined : mismatch;
  }
  if (expected instanceof Date) {
    return actual instanceof Date && actual.getTime() === expected.getTime() ? undefined : mismatch;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return mismatch;
    for (const [index, element] of expected.entries()) {
      const found = differs(actual[index], element, `${path}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (typeof expected === 'object' && expected !== null) {
    if (typeof actual !== 'object' || actual === null || Array.isArray(actual)) return mismatch;
    for (const [key, value] of Object.entries(expected)) {
      const at = path === '' ? key : `${path}.${key}`;
      const has = Object.prototype.hasOwnProperty.call(actual, key);
      if (!has && value !== undefined) return { path: at, expected: value, actual: MISSING };
      const found = differs((actual as Record<string, unknown>)[key], value, at);
      if (found) return found;
    }
    return undefined;
  }
  return Object.is(actual, expected) ? undefined : mismatch;
}

/** A value as a message shows it: JSON-like, RegExps and Dates readable, cut at SHOWN_MAX characters. */
export function show(value: unknown): string {
  if (value === MISSING) return '(missing)';
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return value.name ? `the predicate ${value.name}` : 'the given predicate';
  if (value instanceof RegExp) return String(value);
  if (typeof value === 'symbol') return value.toString();
  let text: string;
  try {
    text =
      JSON.stringify(value, function (this: Record<string, unknown>, key, item: unknown) {
        const raw = key === '' ? value : this[key];
        if (raw instanceof RegExp) return String(raw);
        if (raw instanceof Date) return raw.toISOString();
        if (typeof item === 'bigint') return `${item}n`;
        return item;
      }) ?? Object.prototype.toString.call(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > SHOWN_MAX ? `${text.slice(0, SHOWN_MAX)}...` : text;
}

/** One job on one line: id, state, name, data. */
export function showJob(job: JobView<unknown>): string {
  return `${job.id}  ${job.state.padEnd(8)}  name ${show(job.name)}  data ${show(job.data)}`;
}

/** The difference as a message shows it, e.g. `data.to: expected "b@x", got "a@x"`. */
export function showMismatch(mismatch: Mismatch): string {
  if (typeof mismatch.expected === 'function') return `${show(mismatch.expected)} returned false`;
  const at = mismatch.path === '' ? 'the job' : mismatch.path;
  return `${at}: expected ${show(mismatch.expected)}, got ${show(mismatch.actual)}`;
}
