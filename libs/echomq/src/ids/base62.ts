/**
 * Fixed-width Base62 over unsigned 64-bit integers.
 *
 * The alphabet is in ASCII order (0-9, A-Z, a-z), so for two strings of the same
 * width, comparing bytes compares the numbers they encode. That property is what
 * lets a sorted set ordered by member double as a FIFO queue.
 */
export const BASE62_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** 62^11 > 2^64 > 62^10, so eleven characters hold any unsigned 64-bit value. */
export const BASE62_WIDTH = 11;

export const UINT64_MAX = (1n << 64n) - 1n;

const DIGIT_VALUE: ReadonlyMap<string, bigint> = new Map(
  [...BASE62_ALPHABET].map((char, index) => [char, BigInt(index)]),
);

const TWO_32 = 2 ** 32;

/** Two digits at a time: 62^2 = 3,844 pairs, "00" to "zz", so a division yields two characters. */
const PAIR = 62 * 62;
const PAIRS: readonly string[] = Array.from(
  { length: PAIR },
  (_, value) => BASE62_ALPHABET[Math.floor(value / 62)] + BASE62_ALPHABET[value % 62],
);

/** The encoding of UINT64_MAX: an eleven-character body above it encodes a value past 2^64-1. */
export const BASE62_MAX = 'LygHa16AHYF';

const BODY = /^[0-9A-Za-z]{11}$/;

/** Encodes 0..2^64-1 as exactly eleven Base62 characters, zero-padded on the left. */
export function encodeBase62(value: bigint): string {
  if (value < 0n || value > UINT64_MAX) {
    throw new RangeError(`encodeBase62 takes an unsigned 64-bit integer, got ${value}`);
  }
  return encodeBase62Parts(Number(value >> 32n), Number(value & 0xffffffffn));
}

/**
 * The same encoding from the high and low 32-bit halves, in plain double arithmetic:
 * long division by 62^2 on two limbs stays below 62^2 * 2^32 < 2^53, so it is exact.
 * Minting uses this on every id, so it avoids BigInt and takes two digits per division
 * (five divisions leave a value below 62: 2^64 / 62^10 < 22).
 */
export function encodeBase62Parts(high: number, low: number): string {
  let out = '';
  let hi = high;
  let lo = low;
  for (let i = 0; i < 5; i++) {
    const hiRem = hi % PAIR;
    hi = (hi - hiRem) / PAIR;
    const rest = hiRem * TWO_32 + lo;
    const loRem = rest % PAIR;
    lo = (rest - loRem) / PAIR;
    out = PAIRS[loRem] + out;
  }
  return BASE62_ALPHABET[hi * TWO_32 + lo] + out;
}

/**
 * Whether `text` is eleven Base62 characters of a value within 0..2^64-1, without decoding
 * it: the encoding is fixed width in an ASCII-ordered alphabet, so comparing the text with
 * BASE62_MAX compares the values. Total (never throws); every id check on the hot path uses it.
 */
export function isBase62(text: string): boolean {
  return BODY.test(text) && text <= BASE62_MAX;
}

/**
 * Decodes eleven Base62 characters. Returns undefined (never throws) for a wrong
 * width, a character outside the alphabet, or a value past 2^64-1.
 */
export function decodeBase62(text: string): bigint | undefined {
  if (text.length !== BASE62_WIDTH) return undefined;
  let value = 0n;
  for (const char of text) {
    const digit = DIGIT_VALUE.get(char);
    if (digit === undefined) return undefined;
    value = value * 62n + digit;
  }
  return value <= UINT64_MAX ? value : undefined;
}
