import fc from 'fast-check';
import { InvalidArgumentError, MAX_PARTITIONS, type FlowLimits } from '@app/echomq/internal';
import { partitionLimits, shareOf, summedLimits } from '@app/echomq/queue/partitions/partition-limits';

const count = fc.integer({ min: 1, max: MAX_PARTITIONS });

function limits(overrides: Partial<FlowLimits>): FlowLimits {
  return {
    rateLimit: null,
    globalConcurrency: null,
    laneConcurrency: null,
    laneRateLimit: null,
    ...overrides,
  };
}

describe('partition limits: a shared limit split over the partitions', () => {
  it('splits 10 over 3 as 4, 3, 3', () => {
    expect([0, 1, 2].map((index) => shareOf(10, index, 3))).toEqual([4, 3, 3]);
    expect([0, 1, 2].map((index) => shareOf(100, index, 3))).toEqual([34, 33, 33]);
  });

  it('gives shares that add up to the total and differ by at most one, larger first', () => {
    fc.assert(
      fc.property(count, fc.integer({ min: 0, max: 1_000_000 }), (n, total) => {
        const shares = Array.from({ length: n }, (_, index) => shareOf(total, index, n));
        expect(shares.reduce((sum, share) => sum + share, 0)).toBe(total);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
        expect([...shares].sort((a, b) => b - a)).toEqual(shares);
      }),
    );
  });

  it('splits globalConcurrency and rateLimit.max, and leaves lane limits and the window whole', () => {
    const asked: Partial<FlowLimits> = {
      globalConcurrency: 10,
      rateLimit: { max: 100, windowMs: 1_000 },
      laneConcurrency: 2,
      laneRateLimit: { max: 5, windowMs: 60_000 },
    };
    expect(partitionLimits(asked, 0, 3)).toEqual({
      globalConcurrency: 4,
      rateLimit: { max: 34, windowMs: 1_000 },
      laneConcurrency: 2,
      laneRateLimit: { max: 5, windowMs: 60_000 },
    });
    expect(partitionLimits(asked, 2, 3)).toMatchObject({
      globalConcurrency: 3,
      rateLimit: { max: 33, windowMs: 1_000 },
    });
  });

  it('gives a draining partition (past the count, or the queue itself) the smallest share', () => {
    const asked = { globalConcurrency: 10 };
    const smallest = partitionLimits(asked, 2, 3).globalConcurrency;
    expect(smallest).toBe(3);
    expect(partitionLimits(asked, 3, 3).globalConcurrency).toBe(smallest);
    expect(partitionLimits(asked, 15, 3).globalConcurrency).toBe(smallest);
  });

  it('passes limits through unchanged when the queue is not partitioned, and clears stay clears', () => {
    const asked = { globalConcurrency: 1, rateLimit: { max: 1, windowMs: 10 } };
    expect(partitionLimits(asked, 0, 1)).toBe(asked);
    expect(partitionLimits({ globalConcurrency: null, rateLimit: null }, 1, 3)).toEqual({
      globalConcurrency: null,
      rateLimit: null,
    });
  });

  it('refuses a limit below the partition count: some partition would get 0', () => {
    expect(() => partitionLimits({ globalConcurrency: 2 }, 0, 3)).toThrow(InvalidArgumentError);
    expect(() => partitionLimits({ rateLimit: { max: 2, windowMs: 1_000 } }, 0, 3)).toThrow(
      /rateLimit.max 2 cannot be split over 3 partitions/,
    );
    expect(partitionLimits({ globalConcurrency: 3 }, 2, 3).globalConcurrency).toBe(1);
  });

  it('reads the total back as the sum of the shares', () => {
    fc.assert(
      fc.property(
        count,
        fc.integer({ min: 16, max: 1_000_000 }),
        fc.integer({ min: 16, max: 10_000 }),
        (n, gc, max) => {
          const asked = { globalConcurrency: gc, rateLimit: { max, windowMs: 250 }, laneConcurrency: 7 };
          const shares = Array.from({ length: n }, (_, index) => limits(partitionLimits(asked, index, n)));
          expect(summedLimits(shares)).toEqual(
            limits({ globalConcurrency: gc, rateLimit: { max, windowMs: 250 }, laneConcurrency: 7 }),
          );
        },
      ),
    );
  });

  it('reads a limit no partition has as unset, and one only some have as partition 0 has it', () => {
    expect(summedLimits([limits({}), limits({})])).toEqual(limits({}));
    const shares = [limits({ globalConcurrency: 4 }), limits({ globalConcurrency: null })];
    expect(summedLimits(shares).globalConcurrency).toBe(4);
  });
});
