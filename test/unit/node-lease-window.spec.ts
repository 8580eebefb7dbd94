import fc from 'fast-check';
import { EchoMqError } from '@app/echomq/errors';
import {
  JOB_IDS,
  LeasedSnowflakes,
  NodeLeaseLostError,
  snowflakeParts,
  type MintWindow,
} from '@app/echomq/ids';

const SERVER_NOW = Date.UTC(2026, 3, 1);

interface Window {
  node: number;
  floorMs: number;
  ceilingMs: number;
  validUntil: number;
  serverOffsetMs: number;
}

function windowOf(overrides: Partial<Window> = {}): Window {
  return {
    node: 3,
    floorMs: SERVER_NOW,
    ceilingMs: SERVER_NOW + 1_800,
    validUntil: 1_800,
    serverOffsetMs: SERVER_NOW,
    ...overrides,
  };
}

/** Mints until the first refusal or `max` ids; returns the Snowflakes and the refusal. */
function mintAll(snowflakes: LeasedSnowflakes, max: number): { values: bigint[]; refusal?: unknown } {
  const values: bigint[] = [];
  const mint = JOB_IDS.minter(snowflakes);
  for (let i = 0; i < max; i++) {
    try {
      values.push(JOB_IDS.decode(mint())!);
    } catch (refusal) {
      return { values, refusal };
    }
  }
  return { values };
}

function expectRefusal(refusal: unknown, reason: NodeLeaseLostError['reason']): void {
  expect(refusal).toBeInstanceOf(NodeLeaseLostError);
  expect(refusal).toBeInstanceOf(EchoMqError);
  expect((refusal as NodeLeaseLostError).code).toBe('NODE_LEASE_LOST');
  expect((refusal as NodeLeaseLostError).reason).toBe(reason);
}

describe('minting inside a node lease window', () => {
  it('refuses with a typed error while no window is held, before its first renewal opens it, and from the local deadline on', () => {
    let now = 0;
    let window: MintWindow | undefined = undefined;
    const snowflakes = new LeasedSnowflakes(
      () => window,
      () => now,
    );
    expectRefusal(mintAll(snowflakes, 1).refusal, 'not-held');

    // A new tenure: the ceiling (acquisition + window) is below the floor until a renewal.
    window = windowOf({ floorMs: SERVER_NOW + 1_801, ceilingMs: SERVER_NOW + 1_800 });
    expectRefusal(mintAll(snowflakes, 1).refusal, 'waiting');

    // Renewed: ids are minted at once, stamped with the floor while the server clock is behind it.
    window = windowOf({ floorMs: SERVER_NOW + 1_801, ceilingMs: SERVER_NOW + 1_810 });
    const early = mintAll(snowflakes, 10).values;
    expect(early).toHaveLength(10);
    expect(early.every((value) => snowflakeParts(value).timeMs === SERVER_NOW + 1_801)).toBe(true);

    window = windowOf();
    now = 500;
    expect(snowflakes.blocker()).toBeUndefined();
    expect(mintAll(snowflakes, 10).values).toHaveLength(10);

    now = 1_800; // validUntil: a renewal should have been confirmed by now
    expectRefusal(mintAll(snowflakes, 1).refusal, 'unconfirmed');
  });

  it('never mints a time past the ceiling, even when more than 4096 ids a millisecond borrow ahead', () => {
    const window = windowOf({ ceilingMs: SERVER_NOW + 2 });
    const snowflakes = new LeasedSnowflakes(
      () => window,
      () => 0,
    );
    const { values, refusal } = mintAll(snowflakes, 100_000);
    expectRefusal(refusal, 'exhausted');
    expect(values.length).toBeGreaterThan(4096);
    expect(values.every((value) => snowflakeParts(value).timeMs <= window.ceilingMs)).toBe(true);
  });

  it('keeps every id inside [floor, ceiling] and strictly increasing, whatever the clock does', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000 }),
        fc.integer({ min: 1, max: 1_000 }),
        fc.array(
          fc.tuple(
            fc.integer({ min: -300, max: 400 }),
            fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 4_090, max: 4_200 })),
          ),
          { maxLength: 12 },
        ),
        (floorAfter, span, steps) => {
          let now = 0;
          const window = windowOf({
            floorMs: SERVER_NOW + floorAfter,
            ceilingMs: SERVER_NOW + floorAfter + span,
            validUntil: 10_000,
          });
          const snowflakes = new LeasedSnowflakes(
            () => window,
            () => now,
          );
          const values: bigint[] = [];
          for (const [step, count] of steps) {
            now += step;
            values.push(...mintAll(snowflakes, count).values);
          }
          const outside = values.filter((value) => {
            const { timeMs, node } = snowflakeParts(value);
            return node !== 3 || timeMs < window.floorMs || timeMs > window.ceilingMs;
          });
          expect(outside).toEqual([]);
          expect(values.every((value, i) => i === 0 || value > values[i - 1])).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('two holders of one node whose windows are ordered mint disjoint ids, the later all greater, whatever their clocks', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -1e9, max: 1e9 }),
        fc.integer({ min: -1e9, max: 1e9 }),
        fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 0, max: 3_000 }), { minLength: 1, maxLength: 6 }),
        (skewA, skewB, stepsA, stepsB) => {
          // The old holder's last confirmation came before the new holder's acquisition
          // (SERVER_NOW + 1); its ceiling and the new floor are what the lease derives from them.
          const old = windowOf({
            floorMs: SERVER_NOW - 2_001,
            ceilingMs: SERVER_NOW + 1_800,
            validUntil: 1e12,
          });
          const next = windowOf({
            floorMs: SERVER_NOW + 1 + 2_000 + 1,
            ceilingMs: SERVER_NOW + 9_000,
            validUntil: 1e12,
          });
          // Each host's monotonic clock has its own origin; the offset maps it to server time.
          let nowA = skewA;
          let nowB = skewB;
          old.serverOffsetMs = SERVER_NOW - skewA;
          next.serverOffsetMs = SERVER_NOW - skewB;
          const a = new LeasedSnowflakes(
            () => old,
            () => nowA,
          );
          const b = new LeasedSnowflakes(
            () => next,
            () => nowB,
          );
          const fromA: bigint[] = [];
          const fromB: bigint[] = [];
          for (const step of stepsA) {
            nowA += step; // however far A's clock runs ahead, it stops at its ceiling
            fromA.push(...mintAll(a, 1_000).values);
          }
          for (const step of stepsB) {
            nowB += step;
            fromB.push(...mintAll(b, 1_000).values);
          }
          const highestA = fromA.reduce((max, value) => (value > max ? value : max), -1n);
          expect(fromB.every((value) => value > highestA)).toBe(true);
        },
      ),
      { numRuns: 60 },
    );
  });
});
