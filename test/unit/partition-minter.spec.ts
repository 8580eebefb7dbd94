import fc from 'fast-check';
import {
  JOB_IDS,
  PARTITION_TAGS,
  SnowflakeMinter,
  partitionTagOf,
  snowflakeParts,
} from '@app/echomq/internal';

const BASE = Date.UTC(2026, 0, 1);
/** Sequence values one millisecond has: 12 bits. */
const SEQUENCES = 4096;

/** A clock that plays the given steps (ms, possibly negative) and then stays put. */
function scriptedClock(steps: readonly number[]): () => number {
  let now = BASE;
  let at = 0;
  return () => {
    if (at < steps.length) now += steps[at++];
    return now;
  };
}

/** A mint: a partition tag, or undefined for an unpartitioned queue's id. */
const tagOrNone = fc.option(fc.integer({ min: 0, max: PARTITION_TAGS - 1 }), { nil: undefined });
const clockStep = fc.oneof(fc.constant(0), fc.constant(0), fc.integer({ min: -50, max: 50 }));

describe("the minter's partition tag", () => {
  it('mints strictly increasing Snowflakes that carry their tag, tagged and untagged mixed, whatever the clock does', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(tagOrNone, clockStep), { minLength: 1, maxLength: 400 }), (plan) => {
        const minter = new SnowflakeMinter(5, scriptedClock(plan.map(([, step]) => step)));
        let last = -1n;
        for (const [tag] of plan) {
          const value = minter.next(tag);
          expect(value).toBeGreaterThan(last);
          last = value;
          const parts = snowflakeParts(value);
          expect(parts.node).toBe(5);
          if (tag !== undefined) expect(parts.sequence % PARTITION_TAGS).toBe(tag);
        }
      }),
    );
  });

  it('formats ids whose bytes keep mint order and whose tag reads back with partitionTagOf', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(tagOrNone, clockStep), { minLength: 2, maxLength: 200 }), (plan) => {
        const mint = JOB_IDS.minter(new SnowflakeMinter(9, scriptedClock(plan.map(([, step]) => step))));
        const ids = plan.map(([tag]) => ({ tag, id: mint(tag) }));
        for (let i = 1; i < ids.length; i++) expect(ids[i].id > ids[i - 1].id).toBe(true);
        for (const { tag, id } of ids) {
          expect(JOB_IDS.valid(id)).toBe(true);
          if (tag !== undefined) expect(partitionTagOf(id)).toBe(tag);
        }
      }),
    );
  });

  it('borrows the next millisecond once one tag has used its 256 sequence values of a millisecond', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: PARTITION_TAGS - 1 }),
        fc.integer({ min: 1, max: 700 }),
        (tag, n) => {
          const minter = new SnowflakeMinter(1, () => BASE);
          const perMs = SEQUENCES / PARTITION_TAGS;
          for (let i = 0; i < n; i++) {
            const parts = snowflakeParts(minter.next(tag));
            // The i-th mint of a frozen clock: every 16th value, then on into the next millisecond.
            expect(parts.timeMs).toBe(BASE + Math.floor(i / perMs));
            expect(parts.sequence).toBe((i % perMs) * PARTITION_TAGS + tag);
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('stays strictly increasing through many borrowed milliseconds of mixed tags on a frozen clock', () => {
    fc.assert(
      fc.property(fc.array(tagOrNone, { minLength: 600, maxLength: 1_500 }), (tags) => {
        const minter = new SnowflakeMinter(2, () => BASE);
        let last = -1n;
        let broken = 0;
        for (const tag of tags) {
          const value = minter.next(tag);
          if (value <= last) broken++;
          if (tag !== undefined && snowflakeParts(value).sequence % PARTITION_TAGS !== tag) broken++;
          last = value;
        }
        expect(broken).toBe(0);
        // A frozen clock moves only by borrowing, and a millisecond takes at least 256 mints first.
        const borrowed = snowflakeParts(last).timeMs - BASE;
        expect(borrowed).toBeGreaterThanOrEqual(Math.floor((tags.length - 1) / SEQUENCES));
        expect(borrowed).toBeLessThanOrEqual(Math.ceil(tags.length / (SEQUENCES / PARTITION_TAGS)));
      }),
      { numRuns: 30 },
    );
  });

  it('after an untagged run near the end of a millisecond, a tagged mint borrows the next one', () => {
    const minter = new SnowflakeMinter(1, () => BASE);
    for (let i = 0; i < SEQUENCES - 2; i++) minter.next();
    expect(snowflakeParts(minter.next()).sequence).toBe(SEQUENCES - 2);
    // 4094 has low bits 14: tag 15 still fits (4095), then tag 3 does not.
    expect(snowflakeParts(minter.next(15))).toMatchObject({ timeMs: BASE, sequence: SEQUENCES - 1 });
    expect(snowflakeParts(minter.next(3))).toMatchObject({ timeMs: BASE + 1, sequence: 3 });
    expect(snowflakeParts(minter.next())).toMatchObject({ timeMs: BASE + 1, sequence: 4 });
  });

  it('starts a new millisecond at the tag itself', () => {
    let now = BASE;
    const minter = new SnowflakeMinter(1, () => now);
    expect(snowflakeParts(minter.next(7))).toMatchObject({ timeMs: BASE, sequence: 7 });
    expect(snowflakeParts(minter.next(7))).toMatchObject({ timeMs: BASE, sequence: 23 });
    expect(snowflakeParts(minter.next(2))).toMatchObject({ timeMs: BASE, sequence: 34 });
    now += 1;
    expect(snowflakeParts(minter.next(11))).toMatchObject({ timeMs: BASE + 1, sequence: 11 });
    now += 1;
    expect(snowflakeParts(minter.next())).toMatchObject({ timeMs: BASE + 2, sequence: 0 });
  });

  it('refuses a tag outside 0..15 and mints nothing', () => {
    const minter = new SnowflakeMinter(1, () => BASE);
    expect(snowflakeParts(minter.next(0)).sequence).toBe(0);
    for (const tag of [-1, 16, 1.5, Number.NaN]) expect(() => minter.next(tag)).toThrow(RangeError);
    // The refused mints used no sequence value.
    expect(snowflakeParts(minter.next()).sequence).toBe(1);
  });
});
