import {
  assertScheduleKey,
  isJobId,
  isValidLaneName,
  isValidQueueName,
  STATE_SETS,
} from '@app/echomq/internal';
import fc from 'fast-check';
import { badJobId, badLaneName, badQueueName, badScheduleKey } from '../../api/support/generators';

/**
 * Values a QueueService argument's contract refuses, for the hostile-input scenario's library
 * calls: anything at all (fast-check's `anything`, plus a few values JSON has no form for) that
 * is not what the parameter's type and documented range admit. `undefined` is never among
 * them: it means "left out", which every optional parameter accepts. Nor is `null` where the
 * contract gives it a meaning (a limit's null clears it).
 */

const anything = fc.anything({
  maxDepth: 2,
  maxKeys: 3,
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
});

/**
 * Values with no JSON text at all (JSON.stringify throws or returns nothing). A symbol or a
 * function inside an object or array is not among them: JSON drops it, as it does in any
 * JSON.stringify, so the payload is still JSON.
 */
const cyclic = (): Record<string, unknown> => {
  const value: Record<string, unknown> = {};
  value.self = value;
  return value;
};
export const unserialisable = fc.constantFrom<unknown>(1n, { n: 2n }, () => 1, Symbol('s'), cyclic());

const present = (value: unknown): boolean => value !== undefined;

export const notAQueueName = fc
  .oneof(anything, badQueueName)
  .filter((v) => present(v) && !isValidQueueName(v));
export const notAJobId = fc.oneof(anything, badJobId).filter((v) => present(v) && !isJobId(v));
export const notALaneName = fc.oneof(anything, badLaneName).filter((v) => present(v) && !isValidLaneName(v));
export const notAState = anything.filter(
  (v) => present(v) && !(STATE_SETS as readonly unknown[]).includes(v),
);
export const notAScheduleKey = fc.oneof(anything, badScheduleKey).filter((v) => {
  if (!present(v)) return false;
  try {
    assertScheduleKey(v);
    return false;
  } catch {
    return true;
  }
});

/** Where an options object belongs: a value of another type (undefined, the default, excluded). */
export const notAnObject = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 10 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(anything, { maxLength: 3 }),
  fc.constant(() => ({})),
  fc.bigInt(),
);

const inRange = (v: unknown, min: number, max: number): boolean =>
  typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max;

/** Not an integer from min to max; `nullable` leaves null out (it means "clear" there). */
export function notAnIntIn(min: number, max: number, nullable = false): fc.Arbitrary<unknown> {
  const outside = [
    fc.integer({ min: Number.MIN_SAFE_INTEGER, max: min - 1 }),
    ...(max < Number.MAX_SAFE_INTEGER ? [fc.integer({ min: max + 1, max: Number.MAX_SAFE_INTEGER })] : []),
  ];
  return fc
    .oneof(
      anything,
      ...outside,
      fc.constantFrom(Number.NaN, Infinity, -Infinity, 0.5, 2 ** 53, '1', new Date(0)),
    )
    .filter((v) => present(v) && !inRange(v, min, max) && !(nullable && v === null));
}

/** Not a string of min to max characters. */
export function notAStringOf(min: number, max: number): fc.Arbitrary<unknown> {
  return fc
    .oneof(anything, fc.string({ minLength: max + 1, maxLength: max + 40 }), fc.constant(''))
    .filter((v) => present(v) && !(typeof v === 'string' && v.length >= min && v.length <= max));
}

export const notABoolean = anything.filter((v) => present(v) && typeof v !== 'boolean');
export const notAFunction = anything.filter((v) => typeof v !== 'function' && present(v));
export const notARunAt = fc
  .oneof(anything, fc.constantFrom(new Date(Number.NaN), -1, 1.5, '2030-01-01T00:00:00Z', Number.NaN))
  .filter(
    (v) =>
      present(v) &&
      !(v instanceof Date && Number.isSafeInteger(v.getTime()) && v.getTime() >= 0) &&
      !inRange(v, 0, Number.MAX_SAFE_INTEGER),
  );

/** `base` with one key it does not know, set to anything. */
export function withUnknownKey(
  base: Record<string, unknown>,
  known: readonly string[],
): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .tuple(
      fc.string({ minLength: 1, maxLength: 12 }).filter((key) => !known.includes(key) && key !== '__proto__'),
      anything,
    )
    .map(([key, value]) => ({ ...base, [key]: value }));
}

/** `base` with one of `fields` set to a value from its own bad arbitrary. */
export function withBadField(
  base: Record<string, unknown>,
  fields: Readonly<Record<string, fc.Arbitrary<unknown>>>,
): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof(
    ...Object.entries(fields).map(([key, bad]) => bad.map((value) => ({ ...base, [key]: value }))),
  );
}

/** An options object wrong one way or another: not an object, a bad field, or an unknown key. */
export function badOptions(
  base: Record<string, unknown>,
  fields: Readonly<Record<string, fc.Arbitrary<unknown>>>,
): fc.Arbitrary<unknown> {
  return fc.oneof(notAnObject, withBadField(base, fields), withUnknownKey(base, Object.keys(fields)));
}
