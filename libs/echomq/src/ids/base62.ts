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

/** Encodes 0..2^64-1 as exactly eleven Base62 characters, zero-padded on the left. */
export function encodeBase62(value: bigint): string {
  if (value < 0n || value > UINT64_MAX) {
    throw new RangeError(`encodeBase62 takes an unsigned 64-bit integer, got ${value}`);
  }
  return encodeBase62Parts(Number(value >> 32n), Number(value & 0xffffffffn));
}

/**
 * The same encoding from the high and low 32-bit halves, in plain double arithmetic:
 * long division by 62 on two limbs stays below 62 * 2^32 < 2^53, so it is exact.
 * Minting uses this to avoid BigInt division on the hot path.
 */
export function encodeBase62Parts(high: number, low: number): string {
  let out = '';
  let hi = high;
  let lo = low;
  for (let i = 0; i < BASE62_WIDTH; i++) {
    const hiRem = hi % 62;
    hi = (hi - hiRem) / 62;
    const rest = hiRem * TWO_32 + lo;
    const loRem = rest % 62;
    lo = (rest - loRem) / 62;
    out = BASE62_ALPHABET[loRem] + out;
  }
  return out;
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
