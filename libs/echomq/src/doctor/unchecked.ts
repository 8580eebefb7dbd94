import type { Unchecked } from './findings';

/**
 * The invariants of DESIGN.md a look at stored state cannot check, and why: they are about
 * calls and history, which the lifecycle's model-based test checks, or about keys whose own
 * upkeep already runs on every reaper tick.
 */
export const NOT_CHECKABLE: readonly Unchecked[] = [
  {
    check: 'attempts never decrease (invariant 3)',
    reason: 'a snapshot holds only the current value, not the ones before it',
  },
  {
    check:
      'fencing, atomic transitions, no failure after a first write, replay safety (invariants 4, 6, 8, 9)',
    reason: 'properties of calls, not of stored state',
  },
  {
    check: "scheduler-next names each schedule's one next occurrence",
    reason: 'the schedule sweep of every reaper checks and repairs it on every tick',
  },
  {
    check: 'idempotency, debounce, throttle and reply keys',
    reason: 'they may name jobs that have since finished, by design, and expire by their TTL',
  },
  {
    check: 'rate windows, lane timers and holds',
    reason:
      'they hold server times and counts that expire by themselves; any value is a state the claim accepts',
  },
];
