import { dealSlots } from '@app/echomq/worker/shared-slots';
import { poolOf } from './support/fake-slot-loop';

describe('dealSlots: free slots to the holder with the fewest, ties to the lowest ticket', () => {
  it('levels the holders up and gives the rest to the lowest tickets', () => {
    const holders = [
      { held: 0, ticket: 3 },
      { held: 0, ticket: 1 },
      { held: 0, ticket: 2 },
    ];
    expect(dealSlots(6, holders)).toEqual([2, 2, 2]);
    expect(dealSlots(7, holders)).toEqual([2, 3, 2]);
    expect(dealSlots(1, holders)).toEqual([0, 1, 0]);
    expect(dealSlots(0, holders)).toEqual([0, 0, 0]);
  });

  it('fills the lowest first and leaves those above the final level alone', () => {
    const holders = [
      { held: 5, ticket: 1 },
      { held: 1, ticket: 2 },
      { held: 0, ticket: 3 },
    ];
    expect(dealSlots(3, holders)).toEqual([0, 1, 2]);
    expect(dealSlots(4, holders)).toEqual([0, 2, 2]);
    expect(dealSlots(10, holders)).toEqual([1, 4, 5]);
  });

  it('deals exactly what one-at-a-time dealing would, for any input', () => {
    for (let seed = 1; seed <= 300; seed++) {
      let state = seed;
      const next = (below: number): number => {
        state = (state * 48_271) % 2_147_483_647;
        return state % below;
      };
      const holders = Array.from({ length: 1 + next(17) }, (_, index) => ({
        held: next(9),
        ticket: index * 7 + next(7),
      }));
      const free = next(40);
      const expected = holders.map(() => 0);
      for (let slot = 0; slot < free; slot++) {
        let best = 0;
        for (let index = 1; index < holders.length; index++) {
          const [a, b] = [holders[index], holders[best]];
          const [heldA, heldB] = [a.held + expected[index], b.held + expected[best]];
          if (heldA < heldB || (heldA === heldB && a.ticket < b.ticket)) best = index;
        }
        expected[best] += 1;
      }
      expect(dealSlots(free, holders)).toEqual(expected);
    }
  });
});

describe('SharedSlots: one queue concurrency over its partitions', () => {
  it('with three partitions all busy, each gets its share of 6 from the start', () => {
    const { pool, loops } = poolOf(6, 3);
    for (const loop of loops) loop.budget.ready();
    expect(loops.map((loop) => loop.claim())).toEqual([2, 2, 2]);
    expect(pool.taken).toBe(6);
    expect(loops.map((loop) => loop.claim())).toEqual([0, 0, 0]);
  });

  it('lends the shares of idle partitions to a busy one, and gives them back as its handlers return', () => {
    const { pool, loops } = poolOf(6, 3);
    const [busy, second, third] = loops;
    for (const loop of loops) loop.budget.ready();
    // The two others found nothing to claim: parked, their shares lent.
    second.budget.park();
    third.budget.park();
    expect(busy.claim()).toBe(6);
    // Work arrives for the second: nothing is free, and nothing is taken from a running handler.
    expect(second.claim()).toBe(0);
    expect(pool.taken).toBe(6);
    // Each slot the busy loop frees goes to the waiting one until they are level.
    for (const expected of [1, 1, 1]) {
      busy.finish();
      expect(busy.claim()).toBe(0);
      expect(second.claim()).toBe(expected);
    }
    expect([busy.slots.runningCount, second.slots.runningCount]).toEqual([3, 3]);
    // Level: two slots free, one for each.
    busy.finish();
    second.finish();
    expect(second.claim()).toBe(1);
    expect(busy.claim()).toBe(1);
  });

  it('never lets the loops together hold more than the concurrency', () => {
    const { pool, loops } = poolOf(5, 4);
    let state = 7;
    const next = (below: number): number => {
      state = (state * 48_271) % 2_147_483_647;
      return state % below;
    };
    let claimed = 0;
    for (let step = 0; step < 2_000; step++) {
      const loop = loops[next(loops.length)];
      const action = next(5);
      if (action <= 1) claimed += loop.claim();
      else if (action === 2 && loop.slots.runningCount > 0) loop.finish();
      else if (action === 3) loop.budget.park();
      else if (loop.slots.runningCount > 0) {
        // A handler that outlived its timeout: it no longer runs on its attempt, but lingers.
        loop.finish();
        loop.slots.lingeringCount += 1;
      } else if (loop.slots.lingeringCount > 0) loop.slots.lingeringCount -= 1;
      const running = loops.reduce((sum, each) => sum + each.slots.runningCount, 0);
      expect(running).toBeLessThanOrEqual(5);
      expect(pool.taken).toBeLessThanOrEqual(5);
    }
    // The walk did fill the pool many times over, so the bound was tested, not idle.
    expect(claimed).toBeGreaterThan(100);
  });

  it('with fewer slots than partitions, hands the one slot to each busy partition in turn', () => {
    const { loops } = poolOf(1, 3);
    for (const loop of loops) loop.budget.ready();
    const order: number[] = [];
    for (let turn = 0; turn < 6; turn++) {
      const claimed = loops.map((loop) => loop.claim());
      const index = claimed.indexOf(1);
      expect(claimed.filter((count) => count > 0)).toEqual([1]);
      order.push(index);
      loops[index].finish();
    }
    expect(order).toEqual([0, 1, 2, 0, 1, 2]);
  });

  it('counts lingering handlers past the concurrency, over all loops, as taken', () => {
    const { pool, loops } = poolOf(2, 2);
    loops[0].slots.lingeringCount = 2;
    loops[1].slots.lingeringCount = 1;
    expect(pool.taken).toBe(1);
    expect(loops[0].claim()).toBe(1);
    expect(loops[1].claim()).toBe(0);
  });

  it('tells waiting loops when a loop parks or a claim comes back', async () => {
    const { pool, loops } = poolOf(2, 2);
    for (const loop of loops) loop.budget.ready();
    let told = 0;
    void pool.changes.changed().then(() => (told += 1));
    loops[1].budget.park();
    await Promise.resolve();
    expect(told).toBe(1);
    void loops[0].budget.changed().then(() => (told += 1));
    loops[0].budget.reserve(1);
    loops[0].budget.release(1);
    await Promise.resolve();
    expect(told).toBe(2);
  });
});
