import fc from 'fast-check';
import { MAX_PARTITIONS } from '@app/echomq/internal';
import { bucketOf, RoundRobin } from '@app/echomq/queue/partitions/partition-routing';

/** A count large enough that `hash % count` is the hash itself: the 32-bit FNV-1a value. */
const WHOLE_HASH = 2 ** 32;

describe('bucketOf: which partition a lane or a key belongs to', () => {
  it('is 32-bit FNV-1a: the published test vectors', () => {
    // Any change of hash would move every lane and key of every live queue to another partition.
    expect(bucketOf('', WHOLE_HASH)).toBe(0x811c9dc5);
    expect(bucketOf('a', WHOLE_HASH)).toBe(0xe40c292c);
    expect(bucketOf('foobar', WHOLE_HASH)).toBe(0xbf9cf968);
  });

  it('keeps these names in these partitions, release after release', () => {
    expect(bucketOf('lane:tenant-1', 3)).toBe(2);
    expect(bucketOf('lane:tenant-1', 16)).toBe(5);
    expect(bucketOf('key:order-42', 3)).toBe(0);
    expect(bucketOf('key:order-42', 16)).toBe(3);
    expect(bucketOf('schedule:nightly', 3)).toBe(1);
    expect(bucketOf('schedule:nightly', 16)).toBe(3);
  });

  it('is a partition index in 0..count-1 and the same on every call', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 80 }),
        fc.integer({ min: 1, max: MAX_PARTITIONS }),
        (name, count) => {
          const bucket = bucketOf(name, count);
          expect(Number.isInteger(bucket)).toBe(true);
          expect(bucket).toBeGreaterThanOrEqual(0);
          expect(bucket).toBeLessThan(count);
          expect(bucketOf(name, count)).toBe(bucket);
        },
      ),
    );
  });

  it('hashes UTF-16 code units, so names outside ASCII are stable too', () => {
    // Not the UTF-8 bytes: 'ö' is one code unit here, and an emoji its two surrogates.
    expect(bucketOf('lane:größe', WHOLE_HASH)).toBe(0xbeb0f1e0);
    expect(bucketOf('lane:\u{1F600}', WHOLE_HASH)).toBe(0xa10f7b82);
  });

  it('spreads many lanes over every partition', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 200; i++) seen.add(bucketOf(`lane:tenant-${i}`, MAX_PARTITIONS));
    expect(seen.size).toBe(MAX_PARTITIONS);
  });
});

describe('RoundRobin: unpinned calls take the partitions in turn', () => {
  it('visits every partition once in any N consecutive picks', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_PARTITIONS }),
        fc.integer({ min: 0, max: 40 }),
        (count, skip) => {
          const turns = new RoundRobin();
          for (let i = 0; i < skip; i++) turns.pick(count);
          const picks = Array.from({ length: count }, () => turns.pick(count));
          expect(new Set(picks).size).toBe(count);
          for (const pick of picks) expect(pick).toBeLessThan(count);
          // Each pick is the next partition after the last one.
          for (let i = 1; i < picks.length; i++) expect(picks[i]).toBe((picks[i - 1] + 1) % count);
        },
      ),
    );
  });
});
