import fc from 'fast-check';
import {
  JOB_IDS,
  MAX_NODE,
  SNOWFLAKE_EPOCH_MS,
  SnowflakeMinter,
  UINT64_MAX,
  snowflakeParts,
} from '@app/echomq/ids';

const BASE = Date.UTC(2026, 0, 1);

/** A fake clock that plays the given steps (ms offsets) and then repeats the last. */
function scriptedClock(startMs: number, steps: readonly number[]): () => number {
  let now = startMs;
  let i = 0;
  return () => {
    if (i < steps.length) now += steps[i++];
    return now;
  };
}

function expectStrictlyIncreasing(values: readonly bigint[]): void {
  const ids = values.map((value) => JOB_IDS.format(value));
  for (let i = 1; i < values.length; i++) {
    if (!(values[i] > values[i - 1])) {
      throw new Error(`value ${i} (${values[i]}) is not above value ${i - 1} (${values[i - 1]})`);
    }
    if (!(ids[i] > ids[i - 1])) {
      throw new Error(`id ${i} (${ids[i]}) does not sort after id ${i - 1} (${ids[i - 1]})`);
    }
  }
}

describe('SnowflakeMinter', () => {
  it('mints strictly increasing values and ids on the real clock', () => {
    const minter = new SnowflakeMinter(3);
    const values = Array.from({ length: 10_000 }, () => minter.next());
    expectStrictlyIncreasing(values);
    expect(new Set(values).size).toBe(values.length);
  });

  it('stays strictly increasing when the clock steps backwards at random', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_NODE }),
        fc.array(fc.integer({ min: -5_000, max: 50 }), { minLength: 1, maxLength: 300 }),
        (node, steps) => {
          const minter = new SnowflakeMinter(node, scriptedClock(BASE, steps));
          const values = Array.from({ length: steps.length + 20 }, () => minter.next());
          expectStrictlyIncreasing(values);
          expect(values.every((value) => snowflakeParts(value).node === node)).toBe(true);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('mints more than 4096 ids in one millisecond without repeating or going back', () => {
    const frozen = BASE + 123;
    const minter = new SnowflakeMinter(7, () => frozen);
    const values = Array.from({ length: 4096 * 3 + 17 }, () => minter.next());
    expectStrictlyIncreasing(values);
    const first = snowflakeParts(values[0]);
    expect(first).toEqual({ timeMs: frozen, node: 7, sequence: 0 });
    expect(snowflakeParts(values[4095])).toEqual({ timeMs: frozen, node: 7, sequence: 4095 });
    // The 4097th borrows the next millisecond rather than wrapping the sequence.
    expect(snowflakeParts(values[4096])).toEqual({ timeMs: frozen + 1, node: 7, sequence: 0 });
    expect(snowflakeParts(values[values.length - 1]).timeMs).toBe(frozen + 3);
  });

  it('mixes bursts, stalls and backward steps and stays strictly increasing', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: -1_000, max: 3 }),
            fc.oneof(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 4_090, max: 4_200 })),
          ),
          {
            minLength: 1,
            maxLength: 4,
          },
        ),
        (bursts) => {
          let now = BASE;
          const minter = new SnowflakeMinter(1, () => now);
          const values: bigint[] = [];
          for (const [step, count] of bursts) {
            now += step;
            for (let i = 0; i < count; i++) values.push(minter.next());
          }
          expectStrictlyIncreasing(values);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('ids from two nodes in one millisecond are distinct and ordered by node', () => {
    const clock = (): number => BASE;
    const a = new SnowflakeMinter(1, clock).next();
    const b = new SnowflakeMinter(2, clock).next();
    expect(a).not.toBe(b);
    expect(a < b).toBe(true);
  });

  it('snowflakeParts recovers the node and the time of minting', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: MAX_NODE }),
        fc.integer({ min: SNOWFLAKE_EPOCH_MS, max: SNOWFLAKE_EPOCH_MS + 2 ** 41 }),
        (node, timeMs) => {
          const value = new SnowflakeMinter(node, () => timeMs).next();
          expect(value >= 0n && value <= UINT64_MAX).toBe(true);
          expect(snowflakeParts(value)).toEqual({ timeMs, node, sequence: 0 });
          expect(JOB_IDS.parts(JOB_IDS.format(value))).toEqual({ timeMs, node, sequence: 0 });
        },
      ),
    );
  });

  it('a later millisecond always outranks a larger node or sequence', () => {
    const early = new SnowflakeMinter(MAX_NODE, () => BASE);
    for (let i = 0; i < 4095; i++) early.next();
    const lastOfEarly = early.next();
    expect(snowflakeParts(lastOfEarly)).toEqual({ timeMs: BASE, node: MAX_NODE, sequence: 4095 });
    const late = new SnowflakeMinter(0, () => BASE + 1).next();
    expect(late > lastOfEarly).toBe(true);
  });

  it('clamps a clock before the epoch to the epoch', () => {
    const value = new SnowflakeMinter(5, () => SNOWFLAKE_EPOCH_MS - 10_000).next();
    expect(snowflakeParts(value)).toEqual({ timeMs: SNOWFLAKE_EPOCH_MS, node: 5, sequence: 0 });
  });

  it('refuses node numbers outside 0..1023', () => {
    for (const node of [-1, 1024, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new SnowflakeMinter(node)).toThrow(RangeError);
    }
    expect(new SnowflakeMinter(0).node).toBe(0);
    expect(new SnowflakeMinter(MAX_NODE).node).toBe(1023);
  });
});
