/**
 * The flow-control part of a verification: every flow key's content against the model
 * (./flow.ts), and the invariants of design.md read straight off Redis:
 * - each non-empty (level, lane) pending set is EITHER in ready:<level> OR a digit of
 *   held[lane], never both, and no ready member or held digit is without pending work;
 * - lane-active[lane] = the lane's jobs in active (the model's, which verify compares with the sets).
 * Rate hashes are keyed by slices of server time, so their sums are compared, not their fields.
 */
import type { ChainableCommander } from 'ioredis';
import type { QueueKeys } from '@app/echomq/internal';
import {
  DEFAULT_LANE,
  LANES,
  rateSlice,
  RATE_WINDOWS,
  type RateCount,
  THROTTLE_HOLD_MS,
  TOP_LEVEL,
} from './flow';
import type { Model } from './reference';
import { CLOCK_SLACK_MS, type Reporter } from './rows';

export const LEVELS = Array.from({ length: TOP_LEVEL + 1 }, (_, level) => level);

/** Every (lane, level) pending set a run can fill, with its key. */
export function pendingSets(keys: QueueKeys): { lane: string; level: number; key: string }[] {
  return LANES.flatMap((lane) => LEVELS.map((level) => ({ lane, level, key: keys.pendingOf(lane, level) })));
}

export type FlowKeyKind = 'zset' | 'hash' | 'set' | 'string';

/** Every flow key a script can write (besides the pending sets), with its type. */
export function flowKeys(keys: QueueKeys): { key: string; kind: FlowKeyKind }[] {
  return [
    ...LEVELS.map((level) => ({ key: keys.ready(level), kind: 'zset' as const })),
    { key: keys.laneTimers, kind: 'zset' },
    { key: keys.laneHolds, kind: 'zset' },
    { key: keys.pausedLanes, kind: 'set' },
    { key: keys.configuredLanes, kind: 'set' },
    { key: keys.hold, kind: 'string' },
    { key: keys.waiting, kind: 'string' },
    { key: keys.flow, kind: 'string' },
    ...[keys.vtime, keys.held, keys.laneActive, keys.settings, keys.rate].map((key) => ({
      key,
      kind: 'hash' as const,
    })),
    ...LANES.flatMap((lane) => [
      { key: keys.laneSettings(lane), kind: 'hash' as const },
      { key: keys.laneRate(lane), kind: 'hash' as const },
    ]),
  ];
}

/** Queues the reads checkFlow consumes, in its order. */
export function readFlow(pipe: ChainableCommander, keys: QueueKeys): void {
  for (const level of LEVELS) pipe.zrange(keys.ready(level), 0, -1, 'WITHSCORES');
  pipe.hgetall(keys.vtime).hgetall(keys.held).zrange(keys.laneTimers, 0, -1, 'WITHSCORES');
  pipe.zrange(keys.laneHolds, 0, -1, 'WITHSCORES');
  pipe.smembers(keys.pausedLanes).hgetall(keys.laneActive).hgetall(keys.settings);
  pipe.smembers(keys.configuredLanes);
  pipe.hgetall(keys.rate).pttl(keys.rate);
  for (const lane of LANES)
    pipe.hgetall(keys.laneSettings(lane)).hgetall(keys.laneRate(lane)).pttl(keys.laneRate(lane));
  pipe.get(keys.hold).pttl(keys.hold).get(keys.waiting).get(keys.flow);
}

type Hash = Record<string, string>;

function numbers(hash: Hash): Record<string, number> {
  return Object.fromEntries(Object.entries(hash).map(([k, v]) => [k, Number(v)]));
}

function sorted<T>(entries: [string, T][]): Record<string, T> {
  return Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A rate hash against the model's count: the sum of its slices, and a TTL within the window's. */
function checkRate(
  r: Reporter,
  m: Model,
  hash: Hash,
  pttl: number,
  expected: RateCount | null,
  what: string,
): void {
  const values = Object.values(hash).map(Number);
  const sum = values.reduce((a, b) => a + b, 0);
  r.eq(
    m,
    values.length === 0 ? null : sum,
    expected === null ? null : expected.sum,
    `${what}: starts counted`,
  );
  if (values.length > 0) {
    const longest = Math.max(...RATE_WINDOWS) + 2 * rateSlice(Math.max(...RATE_WINDOWS));
    if (!(pttl > 0 && pttl <= longest)) r.fail(m, `${what} has PTTL ${pttl}, expected in (0, ${longest}]`);
  }
}

/** Compares every flow key with the model and checks the invariants; `next` yields readFlow's replies. */
export function checkFlow(
  r: Reporter,
  m: Model,
  next: () => unknown,
  now: number,
  pendingCounts: Map<string, number>,
): void {
  const f = m.flow;
  const ready = new Map<number, [string, number][]>();
  for (const level of LEVELS) {
    const flat = next() as string[];
    const members: [string, number][] = [];
    for (let i = 0; i < flat.length; i += 2) members.push([flat[i], Number(flat[i + 1])]);
    ready.set(level, members);
    r.eq(m, members, f.readyOrder(level), `ready:${level} (lanes and their passes, in claim order)`);
  }
  const vtime = next() as Hash;
  r.eq(m, numbers(vtime), sorted([...f.vtime].map(([level, pass]) => [String(level), pass])), 'vtime');
  const held = next() as Hash;
  r.eq(
    m,
    sorted(Object.entries(held)),
    sorted([...f.held]),
    'held (lanes held back, their levels in order noted)',
  );
  const latest = now + Math.max(THROTTLE_HOLD_MS, 2 * Math.max(...RATE_WINDOWS)) + CLOCK_SLACK_MS;
  for (const [name, expected] of [
    ['lane-timers', f.timers],
    ['lane-holds', f.holds],
  ] as const) {
    const flat = next() as string[];
    const scores: Record<string, number> = {};
    for (let i = 0; i < flat.length; i += 2) scores[flat[i]] = Number(flat[i + 1]);
    r.eq(m, Object.keys(scores).sort(), [...expected.keys()].sort(), `${name}: the lanes in it`);
    for (const [lane, timer] of expected) {
      const score = scores[lane];
      if (timer.due) r.eq(m, score, timer.value, `${name} of ${lane} (rewritten into the past)`);
      else if (!(score > now - CLOCK_SLACK_MS && score <= latest)) {
        r.fail(m, `${name} of ${lane} is ${score}, expected a server time ahead of ${now}`);
      }
    }
  }
  r.eq(m, (next() as string[]).sort(), [...f.pausedLanes].sort(), 'lanes-paused');
  const laneActive = next() as Hash;
  // Without the flow mark the default lane's active jobs are not counted (see flow_in_use).
  const activeByLane = LANES.map((lane) => [lane, m.activeIn(lane)] as [string, number]).filter(
    ([lane, n]) => n > 0 && (lane !== DEFAULT_LANE || f.inUse),
  );
  r.eq(
    m,
    sorted(Object.entries(numbers(laneActive))),
    sorted(activeByLane),
    'lane-active = active jobs per lane',
  );
  r.eq(m, numbers(next() as Hash), sorted(Object.entries(f.settings)), 'settings');
  r.eq(m, (next() as string[]).sort(), [...f.laneSettings.keys()].sort(), 'lanes-configured');
  checkRate(r, m, next() as Hash, next() as number, f.rate, 'rate');
  for (const lane of LANES) {
    r.eq(m, numbers(next() as Hash), sorted(Object.entries(f.laneSettings.get(lane) ?? {})), `lane:${lane}`);
    checkRate(r, m, next() as Hash, next() as number, f.laneRate.get(lane) ?? null, `lane-rate:${lane}`);
  }
  const hold = next() as string | null;
  const holdTtl = next() as number;
  r.eq(m, hold, f.holdMs === null ? null : '1', "the queue's hold (a throttle of scope queue)");
  if (f.holdMs !== null && !(holdTtl > 0 && holdTtl <= f.holdMs)) {
    r.fail(m, `the hold has PTTL ${holdTtl}, expected in (0, ${f.holdMs}]`);
  }
  r.eq(m, next(), f.waiting ? '1' : null, 'waiting (a claim held back by globalConcurrency)');
  r.eq(m, next(), f.inUse ? '1' : null, 'flow (the mark of a queue using flow control)');

  // The invariants, on Redis's own data.
  for (const lane of LANES) {
    for (const level of LEVELS) {
      const work = (pendingCounts.get(`${level}:${lane}`) ?? 0) > 0;
      const inReady = ready.get(level)!.some(([member]) => member === lane);
      const inHeld = held[lane] !== undefined && held[lane].includes(String(level));
      if (work && inReady === inHeld) {
        r.fail(
          m,
          `flow invariant: pending (${level}, ${lane}) is ${inReady ? 'both ready and held' : 'neither ready nor held'}`,
        );
      }
      if (!work && (inReady || inHeld)) {
        r.fail(
          m,
          `flow invariant: (${level}, ${lane}) is ${inReady ? 'ready' : 'held'} without pending work`,
        );
      }
    }
  }
}
