import fc from 'fast-check';
// Pure modules only: the unit suites do not load Nest, ioredis or the scripts.
import { InvalidArgumentError, PayloadTooLargeError } from '@app/echomq/errors';
import {
  buildJobRecord,
  serialiseBackoff,
  serialisePayload,
  type JobToEnqueue,
} from '@app/echomq/queue/enqueue-options';
import { QUEUE_DEFAULTS, resolveQueueOptions, type BackoffPolicy } from '@app/echomq/queue/queue-options';
import { BUILT_IN_MAX_ATTEMPTS } from '@app/echomq/scripts/lua/prelude';

const ID = 'JOB0Ah3kPz9QwE';
const LIMIT = 1024;

function build(job: JobToEnqueue, limit = LIMIT) {
  return buildJobRecord(ID, job, limit);
}

describe('enqueue options', () => {
  describe('buildJobRecord', () => {
    it('builds the record with neutral defaults, and no budget or backoff of its own', () => {
      expect(build({ data: { to: 'a@b.c' } })).toEqual({
        id: ID,
        data: '{"to":"a@b.c"}',
        name: '',
        delayMs: 0,
        runAtMs: 0,
        idempotencyKey: '',
      });
    });

    it('takes every option as given', () => {
      const runAt = new Date(Date.UTC(2030, 0, 1));
      expect(
        build({
          data: [1, 2],
          name: 'welcome',
          maxAttempts: 7,
          backoff: { type: 'fixed', delayMs: 250 },
          delayMs: 5_000,
          runAt,
          idempotencyKey: 'order-1',
        }),
      ).toEqual({
        id: ID,
        data: '[1,2]',
        name: 'welcome',
        maxAttempts: 7,
        backoff: '{"type":"fixed","delayMs":250}',
        delayMs: 0, // runAt wins over delayMs
        runAtMs: runAt.getTime(),
        idempotencyKey: 'order-1',
      });
      expect(build({ data: null, runAt: 1_900_000_000_000 }).runAtMs).toBe(1_900_000_000_000);
    });

    it("writes maxAttempts only when the job sets it (else the serving worker's applies)", () => {
      expect('maxAttempts' in build({ data: 1 })).toBe(false);
      expect(build({ data: 1, maxAttempts: 2 }).maxAttempts).toBe(2);
    });

    it('keeps the built-in budget of the scripts equal to the built-in queue default', () => {
      expect(BUILT_IN_MAX_ATTEMPTS).toBe(QUEUE_DEFAULTS.maxAttempts);
    });

    it('stores undefined data as JSON null', () => {
      expect(build({ data: undefined }).data).toBe('null');
    });

    it('refuses maxAttempts that is not an integer from 1 to 1000000', () => {
      for (const maxAttempts of [
        0,
        -1,
        1.5,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        1_000_001,
        '3' as unknown as number,
      ]) {
        expect(() => build({ data: 1, maxAttempts })).toThrow(InvalidArgumentError);
      }
      expect(build({ data: 1, maxAttempts: 1 }).maxAttempts).toBe(1);
      expect(build({ data: 1, maxAttempts: 1_000_000 }).maxAttempts).toBe(1_000_000);
    });

    it('refuses a negative, fractional or non-numeric delay', () => {
      for (const delayMs of [
        -1,
        -5_000,
        0.5,
        Number.NaN,
        Number.POSITIVE_INFINITY,
        '10' as unknown as number,
      ]) {
        expect(() => build({ data: 1, delayMs })).toThrow(InvalidArgumentError);
      }
    });

    it('refuses an invalid runAt', () => {
      for (const runAt of [new Date('not a date'), -1, 1.5, Number.NaN, '2030-01-01' as unknown as number]) {
        expect(() => build({ data: 1, runAt })).toThrow(InvalidArgumentError);
      }
    });

    it('refuses names that are not strings of at most 128 characters', () => {
      expect(build({ data: 1, name: 'n'.repeat(128) }).name).toHaveLength(128);
      expect(() => build({ data: 1, name: 'n'.repeat(129) })).toThrow(InvalidArgumentError);
      expect(() => build({ data: 1, name: 42 as unknown as string })).toThrow(InvalidArgumentError);
    });

    it('refuses idempotency keys that are empty or longer than 256 characters', () => {
      expect(() => build({ data: 1, idempotencyKey: '' })).toThrow(InvalidArgumentError);
      expect(() => build({ data: 1, idempotencyKey: 'k'.repeat(257) })).toThrow(InvalidArgumentError);
      expect(build({ data: 1, idempotencyKey: 'k'.repeat(256) }).idempotencyKey).toHaveLength(256);
    });

    it('accepts every valid combination and refuses every negative delay (property)', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 1, max: 1_000_000 }),
          fc.nat(),
          fc.integer({ min: -1_000_000, max: -1 }),
          (maxAttempts, delayMs, negative) => {
            const record = build({ data: 1, maxAttempts, delayMs });
            let refused = false;
            try {
              build({ data: 1, delayMs: negative });
            } catch (error) {
              refused = error instanceof InvalidArgumentError;
            }
            return record.maxAttempts === maxAttempts && record.delayMs === delayMs && refused;
          },
        ),
        { numRuns: 500 },
      );
    });
  });

  describe("a job's own backoff", () => {
    it('stores a fixed or exponential policy as JSON with only its own fields', () => {
      expect(serialiseBackoff(undefined)).toBe('');
      expect(JSON.parse(serialiseBackoff({ type: 'fixed', delayMs: 0 }))).toEqual({
        type: 'fixed',
        delayMs: 0,
      });
      const exponential = { type: 'exponential', delayMs: 100, maxDelayMs: 5_000, jitter: 0.25 } as const;
      expect(JSON.parse(serialiseBackoff(exponential))).toEqual(exponential);
      expect(JSON.parse(serialiseBackoff({ type: 'exponential', delayMs: 100 }))).toEqual({
        type: 'exponential',
        delayMs: 100,
      });
    });

    it('refuses a custom function, and any policy outside the ranges of the queue option', () => {
      const custom = { type: 'custom', delay: () => 5 } as unknown as JobToEnqueue['backoff'];
      expect(() => build({ data: 1, backoff: custom })).toThrow(/custom backoff function cannot be stored/);
      const bad: unknown[] = [
        { type: 'custom' },
        { type: 'fixed', delayMs: -1 },
        { type: 'fixed', delayMs: 604_800_001 },
        { type: 'fixed', delayMs: 1.5 },
        { type: 'fixed', delayMs: 10, jitter: 0 },
        { type: 'exponential', delayMs: 100, maxDelayMs: 50 },
        { type: 'exponential', delayMs: 100, jitter: 2 },
        { type: 'exponential', delayMs: 7_200_000 },
        { type: 'linear', delayMs: 10 },
        'fixed',
        null,
      ];
      for (const backoff of bad) {
        expect(() =>
          build({ data: 1, backoff: backoff as BackoffPolicy as JobToEnqueue['backoff'] }),
        ).toThrow(InvalidArgumentError);
      }
    });

    it('round-trips every valid fixed or exponential policy (property)', () => {
      const delay = fc.integer({ min: 0, max: 3_600_000 });
      const policy = fc.oneof(
        delay.map((delayMs) => ({ type: 'fixed' as const, delayMs })),
        fc.record(
          {
            type: fc.constant('exponential' as const),
            delayMs: delay,
            jitter: fc.double({ min: 0, max: 1, noNaN: true }),
          },
          { requiredKeys: ['type', 'delayMs'] },
        ),
      );
      fc.assert(
        fc.property(policy, (p) => {
          expect(JSON.parse(build({ data: 1, backoff: p }).backoff!)).toEqual(p);
        }),
        { numRuns: 200 },
      );
    });
  });

  describe('serialisePayload', () => {
    it('serialises JSON and measures the limit in UTF-8 bytes', () => {
      expect(serialisePayload({ a: [1, 'x'] }, LIMIT)).toBe('{"a":[1,"x"]}');
      // "é" is two bytes in UTF-8: 5 characters of JSON text, 6 bytes.
      expect(serialisePayload('ééé', 8)).toBe('"ééé"');
      expect(() => serialisePayload('ééé', 7)).toThrow(PayloadTooLargeError);
    });

    it('accepts a payload of exactly the limit and refuses one byte more', () => {
      const exact = 'x'.repeat(LIMIT - 2); // plus two quotes
      expect(serialisePayload(exact, LIMIT)).toHaveLength(LIMIT);
      try {
        serialisePayload(exact + 'x', LIMIT);
        throw new Error('a payload over the limit was accepted');
      } catch (error) {
        expect(error).toBeInstanceOf(PayloadTooLargeError);
        expect(error).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', bytes: LIMIT + 1, limit: LIMIT });
      }
    });

    it('refuses data JSON cannot represent with InvalidArgumentError', () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      const throwing = {
        toJSON(): never {
          throw new Error('nope');
        },
      };
      for (const data of [10n, { n: 1n }, circular, () => 1, Symbol('s'), throwing]) {
        expect(() => serialisePayload(data, LIMIT)).toThrow(InvalidArgumentError);
        expect(() => build({ data })).toThrow(InvalidArgumentError);
      }
    });

    it('round-trips any JSON value under the limit', () => {
      fc.assert(
        fc.property(fc.jsonValue(), (value) => {
          const text = serialisePayload(value, 1 << 20);
          expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
        }),
        { numRuns: 200 },
      );
    });
  });

  describe('resolveQueueOptions', () => {
    it('layers built-in defaults < module defaults < per-queue < overrides, ignoring undefined', () => {
      expect(resolveQueueOptions()).toEqual(QUEUE_DEFAULTS);
      const resolved = resolveQueueOptions(
        { maxAttempts: 5, leaseMs: 10_000 },
        { maxAttempts: 8, concurrency: undefined },
        { concurrency: 2 },
      );
      expect(resolved).toEqual({ ...QUEUE_DEFAULTS, maxAttempts: 8, leaseMs: 10_000, concurrency: 2 });
    });
  });
});
