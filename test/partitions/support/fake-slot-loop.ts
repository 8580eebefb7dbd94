import { SharedSlots, type SlotBudget } from '@app/echomq/worker/shared-slots';

/** A loop's slots as the pool reads them, set by the test. */
export class FakeSlots {
  runningCount = 0;
  lingeringCount = 0;
}

/** One loop of a queue in the pool, driven as runClaimPasses drives its budget, with no Redis behind it. */
export class FakeLoop {
  readonly slots = new FakeSlots();
  readonly budget: SlotBudget;

  constructor(pool: SharedSlots) {
    this.budget = pool.join(this.slots);
  }

  /** A claim of everything granted that comes back with `jobs` of them (all, by default); returns what it asked for. */
  claim(jobs?: number): number {
    const free = this.budget.free();
    if (free <= 0) return 0;
    this.budget.reserve(free);
    this.slots.runningCount += Math.min(free, jobs ?? free);
    this.budget.release(free);
    this.budget.claimSucceeded();
    return free;
  }

  /** A claim sent for everything granted, still on its way: returns what it holds. */
  send(): number {
    const free = this.budget.free();
    if (free > 0) this.budget.reserve(free);
    return Math.max(0, free);
  }

  /** The claim on its way failed: backed off from, as runClaimPasses does. */
  failed(held: number): void {
    this.budget.release(held);
    this.budget.claimFailed();
    this.budget.park();
  }

  finish(count = 1): void {
    this.slots.runningCount -= count;
  }
}

/** A pool of `concurrency` slots shared by `loops` fake loops. */
export function poolOf(concurrency: number, loops: number): { pool: SharedSlots; loops: FakeLoop[] } {
  const pool = new SharedSlots(concurrency);
  return { pool, loops: Array.from({ length: loops }, () => new FakeLoop(pool)) };
}
