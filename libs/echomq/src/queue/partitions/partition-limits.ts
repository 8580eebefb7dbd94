import { InvalidArgumentError } from '../../errors';
import type { FlowLimits, RateLimit } from '../../scripts/set-limits';

/**
 * A partitioned queue's shared limits are split over its partitions, draining ones included
 * (limitTargets in partition-layout.ts), so that all of them together never exceed what was
 * asked: globalConcurrency 10 over 3 partitions is 4, 3 and 3, and a rate limit of 100 per
 * second is 34, 33 and 33 per second. Each physical queue enforces its
 * share on its own: a busy partition cannot borrow an idle one's (docs/partitions.md). Lane
 * limits are not split: a lane's jobs live in one partition, which enforces them whole.
 */
export function shareOf(total: number, index: number, count: number): number {
  return Math.floor(total / count) + (index < total % count ? 1 : 0);
}

/** The limits split over the physical queues: globalConcurrency and rateLimit.max. */
const SPLIT = ['globalConcurrency', 'rateLimit.max'] as const;
type SplitLimit = (typeof SPLIT)[number];

/**
 * What a limit too small to give every physical queue at least 1 does: an admin call refuses
 * it (InvalidArgumentError, it is explicit input), a configured limit is clamped to 1 per
 * physical queue (a process must never stop working over a count another process declared).
 */
export type ShortLimit = 'refuse' | 'clamp';

/**
 * The limits partition `index` of `count` enforces (`index`: its place in the layout's
 * limitTargets). With 'refuse', throws InvalidArgumentError when a limit
 * is below `count`; with 'clamp', each share is at least 1 (see tooSmallToSplit).
 */
export function partitionLimits(
  limits: Partial<FlowLimits>,
  index: number,
  count: number,
  short: ShortLimit = 'refuse',
): Partial<FlowLimits> {
  if (count <= 1) return limits;
  if (short === 'refuse') {
    const [name] = tooSmallToSplit(limits, count);
    if (name !== undefined) {
      throw new InvalidArgumentError(
        `${name} ${totalOf(limits, name)} cannot be split over ${count} partitions: each enforces its own ` +
          'share, so it must be at least that many',
      );
    }
  }
  const share = (total: number): number => Math.max(1, shareOf(total, index, count));
  const split: Partial<FlowLimits> = { ...limits };
  if (typeof limits.globalConcurrency === 'number') split.globalConcurrency = share(limits.globalConcurrency);
  if (limits.rateLimit) {
    const rate: RateLimit = limits.rateLimit;
    split.rateLimit = { max: share(rate.max), windowMs: rate.windowMs };
  }
  return split;
}

/** The split limits below `count`: those that cannot give each of `count` physical queues 1. */
export function tooSmallToSplit(limits: Partial<FlowLimits>, count: number): SplitLimit[] {
  if (count <= 1) return [];
  return SPLIT.filter((name) => {
    const total = totalOf(limits, name);
    return total !== undefined && total < count;
  });
}

function totalOf(limits: Partial<FlowLimits>, name: SplitLimit): number | undefined {
  if (name === 'globalConcurrency')
    return typeof limits.globalConcurrency === 'number' ? limits.globalConcurrency : undefined;
  return limits.rateLimit ? limits.rateLimit.max : undefined;
}

/** The queue's limits read back from its physical queues' shares: the split ones summed, the rest as the first's. */
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
