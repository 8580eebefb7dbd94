import fc from 'fast-check';
import {
  BASE62_ALPHABET,
  BrandedId,
  JOB_IDS,
  SnowflakeMinter,
  UINT64_MAX,
  compareIds,
  encodeBase62,
  isJobId,
} from '@app/echomq/ids';

const uint64 = fc.bigInt({ min: 0n, max: UINT64_MAX });
const base62Char = fc.constantFrom(...BASE62_ALPHABET);

/** The reference definition of a valid job id, written independently of the library. */
function referenceValid(candidate: string): boolean {
  if (candidate.length !== 14 || !candidate.startsWith('JOB')) return false;
  let value = 0n;
  for (const char of candidate.slice(3)) {
    const digit = BASE62_ALPHABET.indexOf(char);
    if (digit < 0 || char.length !== 1) return false;
    value = value * 62n + BigInt(digit);
  }
  return value <= UINT64_MAX;
}

/** Valid ids bent one way or another: a character replaced, inserted, dropped, or the brand changed. */
const mutatedId = fc
  .tuple(
    uint64,
    fc.nat(13),
    fc.oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }),
      base62Char,
      fc.constantFrom('j', 'O', 'B', '', ' '),
    ),
    fc.constantFrom('replace', 'insert', 'delete', 'lowercase-brand', 'swap-brand'),
  )
  .map(([value, at, text, how]) => {
    const id = JOB_IDS.format(value);
    switch (how) {
      case 'replace':
        return id.slice(0, at) + text + id.slice(at + 1);
      case 'insert':
        return id.slice(0, at) + text + id.slice(at);
      case 'delete':
        return id.slice(0, at) + id.slice(at + 1);
      case 'lowercase-brand':
        return id.toLowerCase().slice(0, 3) + id.slice(3);
      default:
        return 'JOX' + id.slice(3);
    }
  });

describe('BrandedId (JOB ids)', () => {
  it('formats as the brand plus 11 Base62 characters, 14 bytes', () => {
    fc.assert(
      fc.property(uint64, (value) => {
        const id = JOB_IDS.format(value);
        return (
          id.length === 14 &&
          Buffer.byteLength(id) === 14 &&
          id.startsWith('JOB') &&
          JOB_IDS.valid(id) &&
          JOB_IDS.decode(id) === value
        );
      }),
    );
  });

  it('accepts the edges and refuses one past 2^64-1', () => {
    expect(JOB_IDS.valid('JOB00000000000')).toBe(true);
    expect(JOB_IDS.valid('JOBLygHa16AHYF')).toBe(true);
    expect(JOB_IDS.valid('JOBLygHa16AHYG')).toBe(false);
    expect(JOB_IDS.valid('JOBzzzzzzzzzzz')).toBe(false);
    expect(JOB_IDS.valid('JOB0Ah3kPz9QwE')).toBe(true);
  });

  it('refuses wrong lengths, brands and characters', () => {
    for (const bad of [
      '',
      'JOB',
      'JOB0000000000',
      'JOB000000000000',
      'job00000000000',
      'JOb00000000000',
      'XJOB0000000000',
      'BOJ00000000000',
      'JOB0000000000-',
      'JOB0000000000_',
      'JOB 0000000000',
      'JOB0000000000\n',
      'JOB000000000é',
      'JOB000000000😀',
      ' JOB0000000000',
    ]) {
      expect({ bad, valid: JOB_IDS.valid(bad) }).toEqual({ bad, valid: false });
    }
  });

  it('is total on any value: never throws, false for every non-string', () => {
    fc.assert(
      fc.property(
        fc.anything({ withBigInt: true, withMap: true, withSet: true, withDate: true }),
        (value) => JOB_IDS.valid(value) === (typeof value === 'string' && referenceValid(value)),
      ),
    );
    for (const value of [
      undefined,
      null,
      0,
      1n,
      Symbol('JOB00000000000'),
      ['JOB00000000000'],
      { id: 'JOB00000000000' },
    ]) {
      expect(JOB_IDS.valid(value)).toBe(false);
      expect(isJobId(value)).toBe(false);
    }
  });

  it('agrees with the reference definition on arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme' })),
        (text) => JOB_IDS.valid(text) === referenceValid(text),
      ),
      { numRuns: 500 },
    );
  });

  it('agrees with the reference definition on 14-character strings built near the alphabet', () => {
    const nearId = fc
      .tuple(
        fc.constantFrom('JOB', 'JOB', 'JOB', 'JOb', 'XOB'),
        fc.array(fc.oneof(base62Char, base62Char, fc.constantFrom('-', '_', '/', ' ', '{')), {
          minLength: 11,
          maxLength: 11,
        }),
      )
      .map(([brand, chars]) => brand + chars.join(''));
    fc.assert(
      fc.property(nearId, (text) => JOB_IDS.valid(text) === referenceValid(text)),
      { numRuns: 2000 },
    );
  });

  it('judges mutated valid ids correctly', () => {
    fc.assert(
      fc.property(mutatedId, (text) => JOB_IDS.valid(text) === referenceValid(text)),
      { numRuns: 2000 },
    );
  });

  it('ids with an overflowing body are refused even though every character is in the alphabet', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: UINT64_MAX + 1n, max: 62n ** 11n - 1n }), (value) => {
        let body = '';
        let rest = value;
        for (let i = 0; i < 11; i++) {
          body = BASE62_ALPHABET[Number(rest % 62n)] + body;
          rest /= 62n;
        }
        return !JOB_IDS.valid('JOB' + body) && JOB_IDS.decode('JOB' + body) === undefined;
      }),
    );
  });

  it('byte order of ids is numeric order of their Snowflakes', () => {
    fc.assert(
      fc.property(uint64, uint64, (a, b) => {
        const numeric = a < b ? -1 : a > b ? 1 : 0;
        return compareIds(JOB_IDS.format(a), JOB_IDS.format(b)) === numeric;
      }),
    );
  });

  describe('with another brand', () => {
    const USR = new BrandedId('USR');
    const WORKFLOW = new BrandedId('WORKFLOW');

    it('validates its own brand and refuses the others', () => {
      fc.assert(
        fc.property(uint64, (value) => {
          const body = encodeBase62(value);
          return (
            USR.valid('USR' + body) &&
            !USR.valid('JOB' + body) &&
            !JOB_IDS.valid('USR' + body) &&
            USR.decode(USR.format(value)) === value &&
            WORKFLOW.format(value).length === 19 &&
            WORKFLOW.valid(WORKFLOW.format(value)) &&
            !WORKFLOW.valid(USR.format(value))
          );
        }),
      );
    });

    it('mints with its brand and recovers the parts', () => {
      const mint = USR.minter(new SnowflakeMinter(42, () => Date.UTC(2026, 5, 1)));
      const id = mint();
      expect(id.startsWith('USR')).toBe(true);
      expect(USR.parts(id)).toEqual({ timeMs: Date.UTC(2026, 5, 1), node: 42, sequence: 0 });
      expect(USR.parts('JOB' + id.slice(3))).toBeUndefined();
      expect(JOB_IDS.parts(id)).toBeUndefined();
    });

    it('refuses brands that are not 1 to 8 upper-case letters', () => {
      for (const brand of ['', 'job', 'J0B', 'TOOLONGBR', 'J B', 'JÖB']) {
        expect(() => new BrandedId(brand)).toThrow(RangeError);
      }
      expect(new BrandedId('A').length).toBe(12);
      expect(new BrandedId('ABCDEFGH').length).toBe(19);
    });
  });
});
