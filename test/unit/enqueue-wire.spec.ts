import fc from 'fast-check';
import { Command } from 'ioredis';
import { InvalidArgumentError, PayloadTooLargeError } from '@app/echomq/errors';
import {
  BASE62_ALPHABET,
  JOB_IDS,
  UINT64_MAX,
  decodeBase62,
  encodeBase62Parts,
  isBase62,
} from '@app/echomq/ids';
import { checkBatch } from '@app/echomq/queue/enqueue-batch';
import { buildJobRecord, serialisePayload } from '@app/echomq/queue/enqueue-options';
import { ScriptCommand } from '@app/echomq/scripts/script-command';

// The enqueue path's own encodings, each against a reference that is slow but plainly right.

const text = fc.oneof(
  fc.constant(''),
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  fc.constantFrom('0', '12', 'x'.repeat(300)),
);

describe('the enqueue path on the wire', () => {
  it('writes a script call byte for byte as an ioredis command of the same values', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<'evalsha' | 'eval'>('evalsha', 'eval'),
        fc.string(),
        fc.array(text, { maxLength: 8 }),
        fc.array(fc.oneof(text, fc.integer(), fc.double({ noNaN: true })), { maxLength: 40 }),
        (name, script, keys, args) => {
          const ours = new ScriptCommand(name, script, keys, args).toWritable();
          const reference = new Command(name, [script, keys.length, ...keys, ...args]).toWritable({});
          return Buffer.from(ours).equals(Buffer.from(reference as string));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('encodes two 32-bit limbs as the BigInt value they make', () => {
    const limb = fc.integer({ min: 0, max: 2 ** 32 - 1 });
    fc.assert(
      fc.property(limb, limb, (high, low) => {
        const value = (BigInt(high) << 32n) | BigInt(low);
        return decodeBase62(encodeBase62Parts(high, low)) === value;
      }),
      { numRuns: 5000 },
    );
    expect(encodeBase62Parts(2 ** 32 - 1, 2 ** 32 - 1)).toBe('LygHa16AHYF');
    expect(encodeBase62Parts(0, 0)).toBe('00000000000');
  });

  it('tells a valid Base62 body without decoding it, as decoding would', () => {
    const body = fc.oneof(
      fc.string({ unit: fc.constantFrom(...BASE62_ALPHABET), minLength: 11, maxLength: 11 }),
      // Near the largest value, where only the comparison decides.
      fc.string({ unit: fc.constantFrom(...'GHIJKLMNabyz019'), minLength: 11, maxLength: 11 }),
      fc.string({ minLength: 10, maxLength: 12 }),
    );
    fc.assert(
      fc.property(body, (candidate) => {
        const decoded = decodeBase62(candidate);
        return isBase62(candidate) === (decoded !== undefined && decoded <= UINT64_MAX);
      }),
      { numRuns: 5000 },
    );
    expect(JOB_IDS.valid('JOBLygHa16AHYF')).toBe(true);
    expect(JOB_IDS.valid('JOBLygHa16AHYG')).toBe(false);
    expect(JOB_IDS.valid('JOBLygHa16AHZ0')).toBe(false);
  });

  it('refuses a payload exactly when its UTF-8 bytes pass the limit, whether or not they are counted', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 40 }),
        fc.integer({ min: 1, max: 200 }),
        (s, limit) => {
          const bytes = Buffer.byteLength(JSON.stringify(s));
          try {
            serialisePayload(s, limit);
            return bytes <= limit;
          } catch (error) {
            return error instanceof PayloadTooLargeError && bytes > limit;
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('names a refused item of a batch by its index in the batch', () => {
    const jobs = [{ data: 1 }, { data: 2 }, { data: 3 }, { data: 4, delayMS: 5 }];
    expect(() => checkBatch(jobs as never)).toThrow(/^jobs\[3\] takes /);
    expect(() => checkBatch([{ data: 1 }, undefined] as never)).toThrow(
      'jobs[1] must be an object, got undefined',
    );
    expect(() => buildJobRecord('JOB0Ah3kPz9QwE', { data: 1, lane: 'a b' }, 1024, 2)).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/^jobs\[2\]\.lane must be/) }),
    );
    expect(() => buildJobRecord('JOB0Ah3kPz9QwE', { data: 1, lane: 'a b' }, 1024)).toThrow(/^lane must be/);
    expect(() => buildJobRecord('JOB0Ah3kPz9QwE', { data: 1, timeoutMs: 0 }, 1024, 7)).toThrow(
      InvalidArgumentError,
    );
  });
});
