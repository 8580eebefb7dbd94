import { InvalidArgumentError, RateLimitedError } from '@app/echomq';
import { parseRetryAfter } from '@app/echomq/http/retry-after';
import { THROTTLE_HOLD_MAX_MS } from '@app/echomq/scripts/lua/throttle.lua';

// A RateLimitedError is built where an upstream just limited a handler: it must never throw
// on a value read off the response, or the throttle becomes a failed attempt.

const NOW = Date.UTC(2025, 5, 15, 12, 0, 0); // Sun, 15 Jun 2025 12:00:00 GMT

describe('new RateLimitedError(ms)', () => {
  it.each([
    [1, 1],
    [1_500, 1_500],
    [1.2, 2],
    [1_000.5, 1_001],
    [0, 1],
    [0.4, 1],
    [-5_000, 1],
    [86_400_000, 86_400_000],
    [86_400_001, 86_400_000],
    [Number.MAX_VALUE, 86_400_000],
    [Number.NaN, 1_000],
    [Number.POSITIVE_INFINITY, 1_000],
    [Number.NEGATIVE_INFINITY, 1_000],
    ['5' as unknown as number, 1_000],
  ])('holds %p ms as %p ms', (given, held) => {
    expect(new RateLimitedError(given).retryAfterMs).toBe(held);
  });

  it('holds the queue by default, carries its code, and names the hold it kept', () => {
    expect(new RateLimitedError(0)).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterMs: 1,
      scope: 'queue',
      message: 'Rate limited: the queue is held back for 1 ms',
    });
    expect(new RateLimitedError(86_400_000, { scope: 'lane', message: 'quota' })).toMatchObject({
      retryAfterMs: 86_400_000,
      scope: 'lane',
      message: 'quota',
    });
  });

  it('never holds longer than the throttle transition accepts', () => {
    expect(new RateLimitedError(Number.MAX_VALUE).retryAfterMs).toBe(THROTTLE_HOLD_MAX_MS);
  });

  it('still refuses a scope it does not know (a programming error, not a value off the wire)', () => {
    expect(() => new RateLimitedError(10, { scope: 'tenant' as 'lane' })).toThrow(InvalidArgumentError);
  });
});

describe('RateLimitedError.fromRetryAfter(header)', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: NOW });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it.each([
    ['120', 120_000],
    ['1.5', 1_500],
    [' 30 ', 30_000],
    ['1.0005', 1_001],
    ['0', 1],
    ['86401', 86_400_000],
    ['99999999999999999999999', 86_400_000],
    // HTTP-dates, counted from now (12:00:00)
    ['Sun, 15 Jun 2025 12:02:00 GMT', 120_000],
    ['sun, 15 jun 2025 12:00:30 gmt', 30_000],
    ['Sunday, 15-Jun-25 12:00:05 GMT', 5_000],
    ['Sun Jun 15 12:00:07 2025', 7_000],
    ['Sun Jun  1 12:00:00 2025', 1],
    ['Sun, 15 Jun 2025 11:00:00 GMT', 1],
    ['Tue, 17 Jun 2025 12:00:00 GMT', 86_400_000],
  ])('reads %p as a hold of %p ms', (header, held) => {
    expect(RateLimitedError.fromRetryAfter(header).retryAfterMs).toBe(held);
  });

  it.each([
    [null],
    [undefined],
    [''],
    ['soon'],
    ['-5'],
    ['1e3'],
    ['0x10'],
    ['2 minutes'],
    ['Sun, 31 Feb 2025 12:00:00 GMT'],
    ['Sun, 15 Jun 2025 25:00:00 GMT'],
    ['2025-06-15T12:02:00Z'],
    [42 as unknown as string],
  ])('holds 1,000 ms for a missing or unreadable header (%p)', (header) => {
    expect(RateLimitedError.fromRetryAfter(header).retryAfterMs).toBe(1_000);
  });

  it("takes the constructor's options", () => {
    expect(RateLimitedError.fromRetryAfter('2', { scope: 'lane', message: 'api said 429' })).toMatchObject({
      code: 'RATE_LIMITED',
      retryAfterMs: 2_000,
      scope: 'lane',
      message: 'api said 429',
    });
    expect(RateLimitedError.fromRetryAfter('2')).toBeInstanceOf(RateLimitedError);
  });
});

describe('parseRetryAfter(header, now)', () => {
  it('reads a two-digit rfc850 year as the most recent one that is not more than 50 years ahead', () => {
    expect(parseRetryAfter('Monday, 15-Jun-70 12:00:00 GMT', NOW)).toBe(Date.UTC(2070, 5, 15, 12) - NOW);
    expect(parseRetryAfter('Monday, 15-Jun-80 12:00:00 GMT', NOW)).toBe(Date.UTC(1980, 5, 15, 12) - NOW);
  });

  it('gives a date in the past as a negative delay, and nothing for what is not a Retry-After', () => {
    expect(parseRetryAfter('Sun, 15 Jun 2025 11:59:00 GMT', NOW)).toBe(-60_000);
    expect(parseRetryAfter('tomorrow', NOW)).toBeUndefined();
    expect(parseRetryAfter(null, NOW)).toBeUndefined();
  });
});
