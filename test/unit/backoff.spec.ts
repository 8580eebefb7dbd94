import fc from 'fast-check';
import {
  assertBackoffPolicy,
  backoffDelay,
  InvalidArgumentError,
  storedBackoff,
  type BackoffPolicy,
  type ClaimedJobRecord,
} from '@app/echomq/internal';
import { failRequest } from '@app/echomq/worker/fail-request';

const never = (): number => {
  throw new Error('random() must not be called');
};

describe('backoffDelay', () => {
  describe('fixed', () => {
    it('waits the same delay after every failure', () => {
      const policy: BackoffPolicy = { type: 'fixed', delayMs: 1_500 };
      expect([1, 2, 3, 10, 100].map((attempt) => backoffDelay(policy, attempt, new Error(), never))).toEqual([
        1_500, 1_500, 1_500, 1_500, 1_500,
      ]);
    });

    it('never waits a negative time', () => {
      expect(backoffDelay({ type: 'fixed', delayMs: -5 }, 1, null)).toBe(0);
      expect(backoffDelay({ type: 'fixed', delayMs: 0 }, 1, null)).toBe(0);
    });
  });

  describe('exponential', () => {
    it('doubles from delayMs with each failure (jitter 0)', () => {
      const policy: BackoffPolicy = { type: 'exponential', delayMs: 100, jitter: 0 };
      expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(policy, attempt, null))).toEqual([
        100, 200, 400, 800, 1_600,
      ]);
    });

    it('treats an attempt below 1 as the first', () => {
      const policy: BackoffPolicy = { type: 'exponential', delayMs: 100, jitter: 0 };
      expect(backoffDelay(policy, 0, null)).toBe(100);
      expect(backoffDelay(policy, -3, null)).toBe(100);
    });

    it('stops at maxDelayMs, and at one hour by default', () => {
      const capped: BackoffPolicy = { type: 'exponential', delayMs: 100, maxDelayMs: 500, jitter: 0 };
      expect([1, 2, 3, 4, 20].map((attempt) => backoffDelay(capped, attempt, null))).toEqual([
        100, 200, 400, 500, 500,
      ]);
      const uncapped: BackoffPolicy = { type: 'exponential', delayMs: 1_000, jitter: 0 };
      expect(backoffDelay(uncapped, 40, null)).toBe(3_600_000);
      expect(backoffDelay(uncapped, 2_000, null)).toBe(3_600_000); // 2^1999 is Infinity: still capped
    });

    it('draws the jittered share at random: random 0 gives the floor, random 1 the full delay', () => {
      const policy: BackoffPolicy = { type: 'exponential', delayMs: 1_000, jitter: 0.3 };
      expect(backoffDelay(policy, 3, null, () => 0)).toBe(2_800); // 4000 * 0.7
      expect(backoffDelay(policy, 3, null, () => 1)).toBe(4_000);
      expect(backoffDelay(policy, 3, null, () => 0.5)).toBe(3_400); // 2800 + 1200 * 0.5
    });

    it('uses a jitter of 0.5 by default and clamps it to [0, 1]', () => {
      const base: BackoffPolicy = { type: 'exponential', delayMs: 1_000 };
      expect(backoffDelay(base, 1, null, () => 0)).toBe(500);
      expect(backoffDelay(base, 1, null, () => 1)).toBe(1_000);
      expect(backoffDelay({ ...base, jitter: 7 }, 1, null, () => 0)).toBe(0);
      expect(backoffDelay({ ...base, jitter: -1 }, 1, null, () => 0)).toBe(1_000);
    });

    it('uses Math.random when no random source is given', () => {
      const spy = jest.spyOn(Math, 'random').mockReturnValue(0.25);
      try {
        expect(backoffDelay({ type: 'exponential', delayMs: 1_000, jitter: 1 }, 1, null)).toBe(250);
        expect(spy).toHaveBeenCalledTimes(1);
      } finally {
        spy.mockRestore();
      }
    });

    it('stays within [base * (1 - jitter), base] for every attempt, jitter and random draw', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 1_000_000 }),
          fc.integer({ min: 1, max: 60 }),
          fc.option(fc.integer({ min: 0, max: 10_000_000 }), { nil: undefined }),
          fc.double({ min: 0, max: 1, noNaN: true }),
          fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
          (delayMs, attempt, maxDelayMs, jitter, draw) => {
            const policy: BackoffPolicy = { type: 'exponential', delayMs, maxDelayMs, jitter };
            const base = Math.min(maxDelayMs ?? 3_600_000, delayMs * 2 ** (attempt - 1));
            const delay = backoffDelay(policy, attempt, null, () => draw);
            expect(Number.isInteger(delay)).toBe(true);
            expect(delay).toBeGreaterThanOrEqual(Math.floor(base * (1 - jitter)));
            expect(delay).toBeLessThanOrEqual(base);
          },
        ),
      );
    });

    it('doubles from one failure to the next until the cap, never shrinking (jitter 0)', () => {
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 100_000 }),
          fc.integer({ min: 1, max: 60 }),
          fc.integer({ min: 0, max: 10_000_000 }),
          (delayMs, attempt, maxDelayMs) => {
            const policy: BackoffPolicy = { type: 'exponential', delayMs, maxDelayMs, jitter: 0 };
            const now = backoffDelay(policy, attempt, null);
            const next = backoffDelay(policy, attempt + 1, null);
            expect(next).toBeGreaterThanOrEqual(now);
            expect(next).toBe(Math.min(maxDelayMs, 2 * now));
          },
        ),
      );
    });
  });

  describe('custom', () => {
    it('asks the policy, with the attempt and the error', () => {
      const error = new Error('rate limited');
      const delay = jest.fn((attempt: number, cause: unknown) => (cause === error ? attempt * 1_000 : 1));
      expect(backoffDelay({ type: 'custom', delay }, 3, error, never)).toBe(3_000);
      expect(delay).toHaveBeenCalledWith(3, error);
    });

    it('rounds fractions and turns negative, NaN or infinite answers into 0', () => {
      const custom = (value: number): BackoffPolicy => ({ type: 'custom', delay: () => value });
      expect(backoffDelay(custom(12.6), 1, null)).toBe(13);
      expect(backoffDelay(custom(-10), 1, null)).toBe(0);
      expect(backoffDelay(custom(Number.NaN), 1, null)).toBe(0);
      expect(backoffDelay(custom(Number.POSITIVE_INFINITY), 1, null)).toBe(0);
    });
  });
});

describe('assertBackoffPolicy', () => {
  it('accepts valid policies as they are', () => {
    const policies: BackoffPolicy[] = [
      { type: 'fixed', delayMs: 0 },
      { type: 'exponential', delayMs: 250, maxDelayMs: 10_000, jitter: 0.2 },
      { type: 'custom', delay: () => 5 },
    ];
    for (const policy of policies) expect(assertBackoffPolicy(policy)).toBe(policy);
  });

  it('rejects a negative or non-numeric delay and a custom policy without a function', () => {
    expect(() => assertBackoffPolicy({ type: 'fixed', delayMs: -1 })).toThrow(InvalidArgumentError);
    expect(() => assertBackoffPolicy({ type: 'exponential', delayMs: Number.NaN })).toThrow(
      InvalidArgumentError,
    );
    expect(() =>
      assertBackoffPolicy({ type: 'custom', delay: undefined } as unknown as BackoffPolicy),
    ).toThrow(InvalidArgumentError);
  });
});

describe("a job's own backoff, as its row keeps it", () => {
  it('reads back a stored fixed or exponential policy', () => {
    expect(storedBackoff('{"type":"fixed","delayMs":40}')).toEqual({ type: 'fixed', delayMs: 40 });
    expect(storedBackoff('{"type":"exponential","delayMs":10,"jitter":0}')).toEqual({
      type: 'exponential',
      delayMs: 10,
      jitter: 0,
    });
  });

  it('refuses text that is not a storable policy within the ranges', () => {
    for (const text of ['', 'not json', 'null', '{}', '{"type":"custom"}', '{"type":"fixed","delayMs":-1}']) {
      expect(() => storedBackoff(text)).toThrow(InvalidArgumentError);
    }
  });
});

describe('the wait after a failed attempt', () => {
  const serving: BackoffPolicy = { type: 'fixed', delayMs: 1_000 };
  function claimed(backoff: string | null, attempt = 2): ClaimedJobRecord {
    return {
      id: 'JOB0Ah3kPz9QwE',
      attempt,
      claimant: 'w.0',
      data: '{}',
      name: '',
      maxAttempts: 5,
      budgetBase: 0,
      backoff,
      lane: 'default',
      priority: 0,
      timeoutMs: null,
      suspect: false,
    };
  }

  it("is the serving worker's policy for a job without its own", () => {
    expect(failRequest(serving, claimed(null), new Error('x')).backoffMs).toBe(1_000);
  });

  it("is the job's own policy when it carries one, counted in its budget", () => {
    expect(failRequest(serving, claimed('{"type":"fixed","delayMs":40}'), new Error('x')).backoffMs).toBe(40);
    const exponential = '{"type":"exponential","delayMs":100,"jitter":0}';
    // Attempt 4 of a budget that began after attempt 1: the third failure of it waits 100 * 2^2.
    expect(failRequest(serving, { ...claimed(exponential, 4), budgetBase: 1 }, null).backoffMs).toBe(400);
  });

  it('keeps the handler error and retries at once when the stored policy cannot be read', () => {
    const request = failRequest(serving, claimed('{"type":"fixed"}'), new Error('handler broke'));
    expect(request.backoffMs).toBe(0);
    expect(request.error).toMatch(/^Error: handler broke; backoff failed: InvalidArgumentError/);
  });
});
