import { assertScheduleKey, isJobId, isValidLaneName, isValidQueueName, JOB_IDS } from '@app/echomq/internal';
import fc from 'fast-check';
import { MAX_DELAY_MS } from '../../../apps/api/src/queues/dto/enqueue-job.dto';
import { RUN_AT_MAX_MS, runAtToMs } from '../../../apps/api/src/queues/dto/validators';

/**
 * Generators of malformed input for the api and the library: values that each rule of the
 * contract refuses (names, ids, fields out of range or of the wrong type, text that is not
 * JSON). Every one is certain to be wrong by the rule it targets, so an answer other than a
 * refusal is a finding, never a generator's accident. Shared by the api's generated spec and
 * the fault battery's hostile-input scenario.
 */

export const json = (value: unknown): string => JSON.stringify(value);

/** A small, always-valid payload (well under any payload limit, no reserved keys). */
export const payload = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 20 }),
  fc.constant(null),
  fc.dictionary(fc.stringMatching(/^[a-z]{1,5}$/), fc.integer(), { maxKeys: 3 }),
);
export const validItem = payload.map((data) => ({ data }));

const nonInteger = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n));

export const notAnInteger = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
  nonInteger,
);

/** Not an integer in [min, max]: another type, a fraction, or a number outside the range. */
export function notAnIntegerIn(min: number, max: number): fc.Arbitrary<unknown> {
  const above =
    max < Number.MAX_SAFE_INTEGER ? [fc.integer({ min: max + 1, max: Number.MAX_SAFE_INTEGER })] : [];
  return fc.oneof(
    notAnInteger,
    fc.integer({ min: Number.MIN_SAFE_INTEGER, max: min - 1 }),
    ...above,
    fc.constantFrom(2 ** 53, 1e300, -0.5),
  );
}

export const notAString = fc.oneof(
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 2 }),
);

export const notARunAt = fc.oneof(
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.string({ maxLength: 30 }).filter((text) => runAtToMs(text) === undefined),
  fc.constantFrom('2030-01-01', '2030-01-01T00:00:00', '2030-02-30T00:00:00Z', '1969-12-31T23:59:59Z'),
  fc.integer({ max: -1 }),
  fc.integer({ min: RUN_AT_MAX_MS + 1, max: Number.MAX_SAFE_INTEGER }),
  nonInteger,
);

/** One field of an enqueue item set to a wrong type or an out-of-range value. */
export const badEnqueueField: fc.Arbitrary<[string, unknown]> = fc.oneof(
  fc.tuple(fc.constantFrom('delayMs', 'maxAttempts'), notAnInteger),
  fc.tuple(fc.constantFrom('name', 'idempotencyKey'), notAString),
  fc.tuple(fc.constant('runAt'), notARunAt),
  fc.tuple(
    fc.constant('delayMs'),
    fc.oneof(fc.integer({ max: -1 }), fc.integer({ min: MAX_DELAY_MS + 1, max: Number.MAX_SAFE_INTEGER })),
  ),
  fc.tuple(
    fc.constant('maxAttempts'),
    fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: 1_000_001, max: 2 ** 40 })),
  ),
  fc.tuple(fc.constant('name'), fc.string({ minLength: 129, maxLength: 300 })),
  fc.tuple(
    fc.constant('idempotencyKey'),
    fc.oneof(fc.constant(''), fc.string({ minLength: 257, maxLength: 400 })),
  ),
  fc.tuple(
    fc.constant('lane'),
    fc.oneof(
      notAString,
      fc.string({ maxLength: 80 }).filter((text) => !isValidLaneName(text)),
    ),
  ),
  fc.tuple(
    fc.constant('priority'),
    fc.oneof(notAnInteger, fc.integer({ max: -1 }), fc.integer({ min: 10, max: 2 ** 40 })),
  ),
  fc.tuple(
    fc.constant('timeoutMs'),
    fc.oneof(notAnInteger, fc.integer({ max: 0 }), fc.integer({ min: 604_800_001, max: 2 ** 40 })),
  ),
  // A job's own backoff that is not a fixed or exponential policy in range.
  fc.tuple(
    fc.constant('backoff'),
    fc.oneof(
      fc.constant(null),
      fc
        .jsonValue({ maxDepth: 1 })
        .filter((value) => typeof value !== 'object' || value === null || Array.isArray(value)),
      fc.record({ type: fc.constantFrom('custom', 'linear', '') }),
      fc.record({ type: fc.constant('fixed'), delayMs: fc.oneof(fc.integer({ max: -1 }), fc.constant(1.5)) }),
    ),
  ),
  // A debounce or throttle that is not an object of its fields in range.
  fc.tuple(
    fc.constantFrom('debounce', 'throttle'),
    fc.oneof(
      fc.constant(null),
      fc.integer(),
      fc.string({ maxLength: 5 }),
      fc.constant({}),
      fc.record({ key: fc.constant(''), delayMs: fc.constant(10), windowMs: fc.constant(10) }),
      fc.record({ key: fc.constant('k'), delayMs: fc.integer({ max: 0 }), windowMs: fc.integer({ max: 0 }) }),
    ),
  ),
);

export const ENQUEUE_FIELDS: ReadonlySet<string> = new Set([
  'name',
  'data',
  'delayMs',
  'runAt',
  'maxAttempts',
  'idempotencyKey',
  'backoff',
  'lane',
  'priority',
  'timeoutMs',
  'debounce',
  'throttle',
]);

/** A key no body of the api knows, including names class-transformer or Nest would silently drop. */
export function unknownKeyBesides(known: ReadonlySet<string>): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ minLength: 1, maxLength: 20 }).filter((key) => !known.has(key)),
    fc
      .constantFrom('toString', 'hasOwnProperty', 'valueOf', '__proto__', 'constructor', 'prototype', 'jobs')
      .filter((key) => !known.has(key)),
  );
}

/** `{...object, key: value}` as JSON text, so that keys such as "__proto__" survive as sent. */
export function withExtraKey(object: object, key: string, value: unknown): string {
  const text = json(object);
  const head = text === '{}' ? '{' : `${text.slice(0, -1)},`;
  return `${head}${json(key)}:${json(value) ?? 'null'}}`;
}

/** An enqueue item with exactly one thing wrong with it, as JSON text. */
export const badItemJson: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(validItem, badEnqueueField).map(([item, [key, value]]) => json({ ...item, [key]: value })),
  fc
    .tuple(validItem, unknownKeyBesides(ENQUEUE_FIELDS), fc.jsonValue({ maxDepth: 1 }))
    .map(([item, key, value]) => withExtraKey(item, key, value)),
  // data missing (other fields valid)
  fc.record({ name: fc.string({ maxLength: 10 }), delayMs: fc.nat(1000) }).map(json),
);

/** Strings and other values no rule accepts as a queue name. */
export const badQueueName = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 80 }),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }),
    fc.constantFrom(
      'a'.repeat(65),
      'a:b',
      'a{b}',
      '{x}',
      'a b',
      'ä',
      'a/b',
      'a*',
      'a?b',
      'a\u0000',
      '%',
      ' ',
    ),
  )
  .filter((name) => !isValidQueueName(name));

export const badLaneName = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 80 }),
    fc.constantFrom('a'.repeat(65), 'a b', 'a/b', 'a{b}', 'ä'),
  )
  .filter((name) => !isValidLaneName(name));

function refusedScheduleKey(key: unknown): boolean {
  try {
    assertScheduleKey(key);
    return false;
  } catch {
    return true;
  }
}

export const badScheduleKey = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 140 }),
    fc.constantFrom('a'.repeat(129), 'a b', 'a/b', 'a{b}', 'ä'),
  )
  .filter(refusedScheduleKey);

export const validJobId = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map((n) => JOB_IDS.format(n));

export const badJobId = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 30 }),
    fc.constantFrom(
      'JOB',
      'JOB123',
      'job0Ah3kPz9QwE',
      'JOX0Ah3kPz9QwE',
      'JOB0Ah3kPz9QwE0',
      'JOBzzzzzzzzzzz',
      '..',
      '.',
      'bulk',
    ),
    // A valid id with one character replaced by one outside the alphabet.
    fc
      .tuple(validJobId, fc.integer({ min: 3, max: 13 }), fc.constantFrom('-', '_', '.', '~', ' ', 'é', '+'))
      .map(([id, at, char]) => id.slice(0, at) + char + id.slice(at + 1)),
  )
  .filter((id) => !isJobId(id));

/** Text a strict JSON body parser refuses: not JSON, a valid body cut short, or a bare scalar. */
export const notJson = fc.oneof(
  fc.string({ maxLength: 60 }).filter((text) => {
    try {
      JSON.parse(text);
      return false;
    } catch {
      return true;
    }
  }),
  fc
    .tuple(validItem, fc.nat())
    .map(([item, cut]) => json(item).slice(0, cut % json(item).length))
    .filter((text) => text.length > 0),
  fc.constantFrom('1', '"text"', 'true', 'null'),
);

/**
 * Not JSON and not empty: an empty body reads as no fields, which routes whose every field is
 * optional take as a valid request (drain everything, change no setting).
 */
export const nonEmptyNotJson = notJson.filter((text) => text !== '');

/** A query string from pairs, each part percent-encoded. */
export function queryOf(params: readonly (readonly [string, string])[]): string {
  return params.map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(value)}`).join('&');
}
