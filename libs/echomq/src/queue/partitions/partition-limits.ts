import { InvalidArgumentError } from '../../errors';
import type { FlowLimits, RateLimit } from '../../scripts/set-limits';

/**
 * A partitioned queue's shared limits are split over its partitions, so that all of them
 * together never exceed what was asked: globalConcurrency 10 over 3 partitions is 4, 3 and 3,
 * and a rate limit of 100 per second is 34, 33 and 33 per second. Each partition enforces its
 * share on its own: a busy partition cannot borrow an idle one's (docs/partitions.md). Lane
 * limits are not split: a lane's jobs live in one partition, which enforces them whole.
 */
export function shareOf(total: number, index: number, count: number): number {
  return Math.floor(total / count) + (index < total % count ? 1 : 0);
}

/**
 * The limits partition `index` of `count` enforces. A draining partition (at or past the count,
 * or the queue itself once partitioned) gets the smallest share. Throws InvalidArgumentError
 * when a limit is too small to give every partition at least 1.
 */
export function partitionLimits(
  limits: Partial<FlowLimits>,
  index: number,
  count: number,
): Partial<FlowLimits> {
  if (count <= 1) return limits;
  const at = index < count ? index : count - 1;
  const split: Partial<FlowLimits> = { ...limits };
  if (typeof limits.globalConcurrency === 'number') {
    split.globalConcurrency = share('globalConcurrency', limits.globalConcurrency, at, count);
  }
  if (limits.rateLimit) {
    const rate: RateLimit = limits.rateLimit;
    split.rateLimit = { max: share('rateLimit.max', rate.max, at, count), windowMs: rate.windowMs };
  }
  return split;
}

function share(name: string, total: number, index: number, count: number): number {
  if (total < count) {
    throw new InvalidArgumentError(
      `${name} ${total} cannot be split over ${count} partitions: each partition enforces its own share, ` +
        'so it must be at least the partition count',
    );
  }
  return shareOf(total, index, count);
}

/** The queue's limits read back from its partitions' shares: the split ones summed, the rest as partition 0 has them. */
export function summedLimits(shares: readonly FlowLimits[]): FlowLimits {
  const [first] = shares;
  const total = (pick: (limits: FlowLimits) => number | null): number | null => {
    if (shares.some((limits) => pick(limits) === null)) return pick(first);
    return shares.reduce((sum, limits) => sum + (pick(limits) ?? 0), 0);
  };
  const max = total((limits) => limits.rateLimit?.max ?? null);
  return {
    ...first,
    globalConcurrency: total((limits) => limits.globalConcurrency),
    rateLimit:
      first.rateLimit && max !== null ? { max, windowMs: first.rateLimit.windowMs } : first.rateLimit,
  };
}
