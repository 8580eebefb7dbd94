import type { Redis } from 'ioredis';
import {
  DEFAULT_LANE,
  PRIORITY_MAX,
  claimJobs,
  enqueueJobs,
  type ClaimedJobRecord,
  type QueueKeys,
  type ScriptContext,
} from '@app/echomq/internal';
import { jobRecord } from '../../support/assertions';

/**
 * The flow-control picture of one queue, for the specs of the transitions around the claim:
 * every pending set (plain and per lane and level) by its (level, lane), the ready sets, the
 * held lanes, the lane counters. Reads every pending set the queue has (SCAN: a test's own
 * queue only), not only those the indexes name, so a job the indexes lost still shows.
 */
export interface FlowSnapshot {
  /** `<level>:<lane>` -> ids in the set, in set order. */
  readonly pending: Record<string, string[]>;
  /** level -> lane -> pass. */
  readonly ready: Record<number, Record<string, number>>;
  /** lane -> level digits. */
  readonly held: Record<string, string>;
  readonly laneActive: Record<string, number>;
  /** lane-timers: rate-held lanes -> when their window opens. */
  readonly timers: Record<string, number>;
  /** lane-holds: throttled lanes -> until when. */
  readonly holds: Record<string, number>;
  readonly paused: string[];
  /** id -> its row's lane ('l', or the default lane). */
  readonly activeLanes: Record<string, string>;
}

export function at(lane: string, level = 0): string {
  return `${level}:${lane}`;
}

async function pendingKeys(redis: Redis, keys: QueueKeys): Promise<string[]> {
  const found: string[] = [keys.pending];
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', `${keys.pending}:*`, 'COUNT', 1000);
    cursor = next;
    found.push(...page);
  } while (cursor !== '0');
  return found;
}

function placeOf(keys: QueueKeys, key: string): string {
  if (key === keys.pending) return at(DEFAULT_LANE, 0);
  return key.slice(keys.pending.length + 1);
}

export async function flowSnapshot(redis: Redis, keys: QueueKeys): Promise<FlowSnapshot> {
  const pending: Record<string, string[]> = {};
  for (const key of await pendingKeys(redis, keys)) {
    const ids = await redis.zrange(key, 0, -1);
    if (ids.length > 0) pending[placeOf(keys, key)] = ids;
  }
  const ready: Record<number, Record<string, number>> = {};
  for (let level = 0; level <= PRIORITY_MAX; level++) {
    const flat = await redis.zrange(keys.ready(level), 0, -1, 'WITHSCORES');
    for (let i = 0; i < flat.length; i += 2) (ready[level] ??= {})[flat[i]] = Number(flat[i + 1]);
  }
  const numbers = (raw: Record<string, string>) =>
    Object.fromEntries(Object.entries(raw).map(([field, value]) => [field, Number(value)]));
  const timerFlat = await redis.zrange(keys.laneTimers, 0, -1, 'WITHSCORES');
  const timers: Record<string, number> = {};
  for (let i = 0; i < timerFlat.length; i += 2) timers[timerFlat[i]] = Number(timerFlat[i + 1]);
  const holdFlat = await redis.zrange(keys.laneHolds, 0, -1, 'WITHSCORES');
  const holds: Record<string, number> = {};
  for (let i = 0; i < holdFlat.length; i += 2) holds[holdFlat[i]] = Number(holdFlat[i + 1]);
  const activeLanes: Record<string, string> = {};
  for (const id of await redis.zrange(keys.active, 0, -1)) {
    activeLanes[id] = (await redis.hget(keys.job(id), 'l')) ?? DEFAULT_LANE;
  }
  return {
    pending,
    ready,
    held: await redis.hgetall(keys.held),
    laneActive: numbers(await redis.hgetall(keys.laneActive)),
    timers,
    holds,
    paused: (await redis.smembers(keys.pausedLanes)).sort(),
    activeLanes,
  };
}

/**
 * The flow invariants of docs/flow-control.md: a job in pending sits in the set of its row's
 * lane and level; each non-empty (level, lane) set is either in ready at its level or noted
 * in held, never both; no ready member without work; lane-active counts each lane's jobs in
 * active (no field for 0).
 */
export async function flowViolations(redis: Redis, keys: QueueKeys, snap: FlowSnapshot): Promise<string[]> {
  const problems: string[] = [];
  for (const [place, ids] of Object.entries(snap.pending)) {
    const [levelText, ...laneParts] = place.split(':');
    const level = Number(levelText);
    const lane = laneParts.join(':');
    for (const id of ids) {
      const [l, y] = await redis.hmget(keys.job(id), 'l', 'y');
      if ((l ?? DEFAULT_LANE) !== lane || Number(y ?? 0) !== level) {
        problems.push(`${id} is in pending ${place} but its row says ${l ?? DEFAULT_LANE} at ${y ?? 0}`);
      }
    }
    const inReady = snap.ready[level]?.[lane] !== undefined;
    const inHeld = snap.held[lane]?.includes(String(level)) ?? false;
    if (inReady === inHeld)
      problems.push(`${place} has work and is ${inReady ? 'both ready and held' : 'neither ready nor held'}`);
  }
  for (const [level, lanes] of Object.entries(snap.ready)) {
    for (const lane of Object.keys(lanes)) {
      if (!snap.pending[at(lane, Number(level))])
        problems.push(`${lane} is ready at ${level} without work there`);
    }
  }
  for (const [lane, levels] of Object.entries(snap.held)) {
    for (const digit of levels) {
      if (!snap.pending[at(lane, Number(digit))])
        problems.push(`${lane} is held at ${digit} without work there`);
    }
  }
  const counted: Record<string, number> = {};
  // Without the flow mark the default lane's active jobs are not counted (see flow_in_use).
  const marked = (await redis.exists(keys.flow)) === 1;
  for (const lane of Object.values(snap.activeLanes)) {
    if (lane !== DEFAULT_LANE || marked) counted[lane] = (counted[lane] ?? 0) + 1;
  }
  if (JSON.stringify(sorted(counted)) !== JSON.stringify(sorted(snap.laneActive))) {
    problems.push(
      `lane-active ${JSON.stringify(snap.laneActive)} but active holds ${JSON.stringify(counted)}`,
    );
  }
  return problems;
}

function sorted(record: Record<string, number>): [string, number][] {
  return Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Flow snapshot + its invariants, for the end of a test. */
export async function expectFlowConsistent(redis: Redis, keys: QueueKeys): Promise<FlowSnapshot> {
  const snap = await flowSnapshot(redis, keys);
  expect(await flowViolations(redis, keys, snap)).toEqual([]);
  return snap;
}

/** Enqueues one job per (lane, level), in order; returns their ids. */
export async function enqueueIn(
  ctx: ScriptContext,
  mint: () => string,
  places: readonly (readonly [string, number])[],
  overrides: Parameters<typeof jobRecord>[1] = {},
): Promise<string[]> {
  const records = places.map(([lane, priority]) => jobRecord(mint(), { lane, priority, ...overrides }));
  await enqueueJobs(ctx, records, 60_000);
  return records.map((record) => record.id);
}

let claims = 0;

/** One claim call of up to `count` jobs (possibly none: the caps decide). */
export async function claimUpTo(
  ctx: ScriptContext,
  count: number,
  leaseMs = 30_000,
): Promise<ClaimedJobRecord[]> {
  const batch = await claimJobs(ctx, { count, leaseMs, claimantPrefix: `flow${++claims}` });
  return batch.jobs;
}
