import { limitTargets, partitionLayout } from '@app/echomq/queue/partitions/partition-layout';
import fc from 'fast-check';
import { InvalidArgumentError, MAX_PARTITIONS, type FlowLimits } from '@app/echomq/internal';
import {
  partitionLimits,
  shareOf,
  summedLimits,
  tooSmallToSplit,
} from '@app/echomq/queue/partitions/partition-limits';

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

describe('partition limits: a shared limit split over the physical queues', () => {
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

  it('gives every partition its share by its place in limitTargets, so the shares add up to the limit', () => {
    // Four partitions (limitTargets gives their order), draining ones like the others.
    const asked = { globalConcurrency: 10, rateLimit: { max: 101, windowMs: 1_000 } };
    const shares = [0, 1, 2, 3].map((index) => partitionLimits(asked, index, 4));
    expect(shares.map((limits) => limits.globalConcurrency)).toEqual([3, 3, 2, 2]);
    expect(shares.map((limits) => limits.rateLimit?.max)).toEqual([26, 25, 25, 25]);
    expect(shares.map((limits) => limits.rateLimit?.windowMs)).toEqual([1_000, 1_000, 1_000, 1_000]);
  });

  it('passes limits through unchanged for one physical queue, and clears stay clears', () => {
    const asked = { globalConcurrency: 1, rateLimit: { max: 1, windowMs: 10 } };
    expect(partitionLimits(asked, 0, 1)).toBe(asked);
    expect(partitionLimits({ globalConcurrency: null, rateLimit: null }, 1, 3)).toEqual({
      globalConcurrency: null,
      rateLimit: null,
    });
  });

  it('refuses a limit below the number of partitions: some would get 0', () => {
    expect(() => partitionLimits({ globalConcurrency: 2 }, 0, 3)).toThrow(InvalidArgumentError);
    expect(() => partitionLimits({ rateLimit: { max: 2, windowMs: 1_000 } }, 0, 3)).toThrow(
      /rateLimit.max 2 cannot be split over 3 partitions/,
    );
    expect(() => partitionLimits({ globalConcurrency: 3 }, 0, 4, 'refuse')).toThrow(
      /globalConcurrency 3 cannot be split over 4/,
    );
    expect(partitionLimits({ globalConcurrency: 3 }, 2, 3).globalConcurrency).toBe(1);
  });

  it('clamps each share to at least 1 when asked to, and says which limits went over', () => {
    const asked = { globalConcurrency: 2, rateLimit: { max: 3, windowMs: 500 }, laneConcurrency: 1 };
    const shares = [0, 1, 2, 3, 4].map((index) => partitionLimits(asked, index, 5, 'clamp'));
    expect(shares.map((limits) => limits.globalConcurrency)).toEqual([1, 1, 1, 1, 1]);
    expect(shares.map((limits) => limits.rateLimit)).toEqual(
      Array.from({ length: 5 }, () => ({ max: 1, windowMs: 500 })),
    );
    expect(shares.every((limits) => limits.laneConcurrency === 1)).toBe(true);
    expect(tooSmallToSplit(asked, 5)).toEqual(['globalConcurrency', 'rateLimit.max']);
    expect(tooSmallToSplit(asked, 2)).toEqual([]);
    expect(tooSmallToSplit({ globalConcurrency: 4, rateLimit: null }, 5)).toEqual(['globalConcurrency']);
    expect(tooSmallToSplit({ globalConcurrency: 1 }, 1)).toEqual([]);
    // A limit large enough is split exactly as without clamping.
    fc.assert(
      fc.property(count, fc.integer({ min: 16, max: 100_000 }), fc.nat(), (n, total, seed) => {
        const index = seed % n;
        expect(partitionLimits({ globalConcurrency: total }, index, n, 'clamp')).toEqual(
          partitionLimits({ globalConcurrency: total }, index, n),
        );
      }),
    );
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

describe("limit targets: where a partitioned queue's split limits go", () => {
  it('are the partitions while new jobs go to them, and every physical queue once the count is back to 1', () => {
    expect(limitTargets(partitionLayout('q', 1, 1))).toEqual(['q']);
    // Partitioned: the queue itself holds only jobs from before, under the limits they had.
    expect(limitTargets(partitionLayout('q', 3, 3))).toEqual(['q#0', 'q#1', 'q#2']);
    expect(limitTargets(partitionLayout('q', 2, 3))).toEqual(['q#0', 'q#1', 'q#2']);
    // Back to 1: new jobs go to the queue itself, which shares with its draining partitions.
    expect(limitTargets(partitionLayout('q', 1, 3))).toEqual(['q', 'q#0', 'q#1', 'q#2']);
  });
});
