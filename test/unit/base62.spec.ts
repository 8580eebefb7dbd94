import fc from 'fast-check';
import {
  BASE62_ALPHABET,
  BASE62_WIDTH,
  JOB_IDS,
  SNOWFLAKE_EPOCH_MS,
  SnowflakeMinter,
  UINT64_MAX,
  decodeBase62,
  encodeBase62,
  encodeBase62Parts,
} from '@app/echomq/ids';

const uint64 = fc.bigInt({ min: 0n, max: UINT64_MAX });

describe('Base62', () => {
  it('uses an alphabet in ASCII order, 62 distinct characters, 11 wide', () => {
    expect(BASE62_ALPHABET).toHaveLength(62);
    expect(new Set(BASE62_ALPHABET).size).toBe(62);
    expect([...BASE62_ALPHABET].sort().join('')).toBe(BASE62_ALPHABET);
    expect(BASE62_WIDTH).toBe(11);
    expect(62n ** 11n > UINT64_MAX && 62n ** 10n < UINT64_MAX).toBe(true);
  });

  it('encodes the edges of the range exactly', () => {
    expect(encodeBase62(0n)).toBe('00000000000');
    expect(encodeBase62(1n)).toBe('00000000001');
    expect(encodeBase62(61n)).toBe('0000000000z');
    expect(encodeBase62(62n)).toBe('00000000010');
    expect(encodeBase62(UINT64_MAX)).toBe('LygHa16AHYF');
    expect(decodeBase62('LygHa16AHYF')).toBe(UINT64_MAX);
    expect(decodeBase62('LygHa16AHYG')).toBeUndefined();
    expect(decodeBase62('zzzzzzzzzzz')).toBeUndefined();
  });

  it('refuses to encode values outside 0..2^64-1', () => {
    expect(() => encodeBase62(-1n)).toThrow(RangeError);
    expect(() => encodeBase62(UINT64_MAX + 1n)).toThrow(RangeError);
  });

  it('round-trips every unsigned 64-bit value at a fixed width', () => {
    fc.assert(
      fc.property(uint64, (value) => {
        const text = encodeBase62(value);
        return /^[0-9A-Za-z]{11}$/.test(text) && decodeBase62(text) === value;
      }),
      { numRuns: 2000 },
    );
  });

  it('orders encoded strings exactly as the numbers they encode', () => {
    fc.assert(
      fc.property(uint64, uint64, (a, b) => {
        const ea = encodeBase62(a);
        const eb = encodeBase62(b);
        const numeric = a < b ? -1 : a > b ? 1 : 0;
        const lexical = ea < eb ? -1 : ea > eb ? 1 : 0;
        // Redis BYLEX compares bytes: check the byte comparison too.
        const bytes = Math.sign(Buffer.compare(Buffer.from(ea), Buffer.from(eb)));
        return lexical === numeric && bytes === numeric;
      }),
      { numRuns: 2000 },
    );
  });

  it('orders neighbours correctly across digit carries', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: UINT64_MAX - 1n }), (value) => {
        return encodeBase62(value) < encodeBase62(value + 1n);
      }),
    );
  });

  it('decode is total: any string gives a value in range or undefined, never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ minLength: 11, maxLength: 11 })),
        (text) => {
          const value = decodeBase62(text);
          return value === undefined || (value >= 0n && value <= UINT64_MAX && encodeBase62(value) === text);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses wrong widths and characters outside the alphabet', () => {
    expect(decodeBase62('')).toBeUndefined();
    expect(decodeBase62('0000000000')).toBeUndefined();
    expect(decodeBase62('000000000000')).toBeUndefined();
    expect(decodeBase62('0000000000-')).toBeUndefined();
    expect(decodeBase62('0000000000 ')).toBeUndefined();
    expect(decodeBase62('0000000000é')).toBeUndefined();
    // A surrogate pair is two UTF-16 units: eleven units but not eleven digits.
    expect(decodeBase62('000000000😀')).toBeUndefined();
  });
});

describe('encodeBase62Parts (the BigInt-free path minting uses)', () => {
  it('agrees with encodeBase62 on every 64-bit value split into 32-bit halves', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: UINT64_MAX }), (value) => {
        const high = Number(value >> 32n);
        const low = Number(value & 0xffffffffn);
        return encodeBase62Parts(high, low) === encodeBase62(value);
      }),
      { numRuns: 2000 },
    );
    expect(encodeBase62Parts(0xffffffff, 0xffffffff)).toBe(encodeBase62(UINT64_MAX));
    expect(encodeBase62Parts(0, 0)).toBe('0'.repeat(BASE62_WIDTH));
  });
});

describe('the job-id minter', () => {
  it('formats exactly the Snowflakes the BigInt path computes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1023 }),
        fc.array(fc.integer({ min: 0, max: 2 ** 41 }), { minLength: 1, maxLength: 50 }),
        (node, offsets) => {
          const clockA = [...offsets];
          const clockB = [...offsets];
          const viaParts = JOB_IDS.minter(
            new SnowflakeMinter(node, () => SNOWFLAKE_EPOCH_MS + clockA.shift()!),
          );
          const viaBigInt = new SnowflakeMinter(node, () => SNOWFLAKE_EPOCH_MS + clockB.shift()!);
          return offsets.every(() => viaParts() === JOB_IDS.format(viaBigInt.next()));
        },
      ),
      { numRuns: 300 },
    );
  });
});
