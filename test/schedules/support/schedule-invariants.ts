import type { Redis } from 'ioredis';
import { queueKeys } from '@app/echomq/internal';

/** Every key of a queue matching `pattern` under its base (uniqueQueue names hold no glob characters). */
async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...keys);
  } while (cursor !== '0');
  return found;
}

export interface ScheduleState {
  /** Per schedule key: its occurrences waiting in the schedule set, never claimed. */
  readonly waiting: Map<string, string[]>;
  /** Per schedule key: its occurrences in the schedule set waiting out a retry backoff (claimed before). */
  readonly retrying: Map<string, string[]>;
  /** Per schedule key: its occurrences pending (any lane, any level) and active. */
  readonly pending: Map<string, string[]>;
  readonly active: Map<string, string[]>;
  /** Per schedule key: its occurrences never claimed (waiting, or pending with no attempt). */
  readonly unstarted: Map<string, string[]>;
}

function push(map: Map<string, string[]>, key: string, id: string): void {
  map.set(key, [...(map.get(key) ?? []), id]);
}

/** Where every occurrence of the queue's schedules is, read off the sets and the rows' 'sk'. */
export async function scheduleState(redis: Redis, queue: string): Promise<ScheduleState> {
  const keys = queueKeys(queue);
  const state: ScheduleState = {
    waiting: new Map(),
    retrying: new Map(),
    pending: new Map(),
    active: new Map(),
    unstarted: new Map(),
  };
  const pendingSets = (await scanKeys(redis, `${keys.base}pending*`)).filter((key) => !key.includes('reads'));
  const sets: [Map<string, string[]>, string][] = [
    [state.waiting, keys.schedule],
    [state.active, keys.active],
    ...pendingSets.map((key): [Map<string, string[]>, string] => [state.pending, key]),
  ];
  for (const [map, set] of sets) {
    for (const id of await redis.zrange(set, 0, -1)) {
      const [sk, attempts] = await redis.hmget(keys.job(id), 'sk', 'a');
      if (sk === null) continue;
      const claimed = Number(attempts ?? 0) > 0;
      push(map === state.waiting && claimed ? state.retrying : map, sk, id);
      if (!claimed && map !== state.active) push(state.unstarted, sk, id);
    }
  }
  return state;
}

/**
 * The schedules' invariants (docs/schedules.md): every schedule has exactly one occurrence
 * waiting in the schedule set, or none while its next occurrence runs (pending, active or
 * retrying); scheduler-next names that occurrence; a schedule has at most one occurrence never
 * claimed (waiting or pending) and a removed one none; no row of an occurrence is outside every
 * set unless it finished (kept as completed). Throws, naming what broke.
 */
export async function expectScheduleInvariants(redis: Redis, queue: string): Promise<void> {
  const keys = queueKeys(queue);
  const definitions = await redis.hkeys(keys.schedulers);
  const next = await redis.hgetall(keys.schedulerNext);
  const state = await scheduleState(redis, queue);
  const problems: string[] = [];
  if (Object.keys(next).sort().join() !== [...definitions].sort().join()) {
    problems.push(`schedulers ${definitions.join()} and scheduler-next ${Object.keys(next).join()} differ`);
  }
  for (const key of definitions) {
    const waiting = state.waiting.get(key) ?? [];
    const running = [
      ...(state.pending.get(key) ?? []),
      ...(state.active.get(key) ?? []),
      ...(state.retrying.get(key) ?? []),
    ];
    const unstarted = state.unstarted.get(key) ?? [];
    if (unstarted.length > 1)
      problems.push(`${key} has ${unstarted.length} occurrences never claimed: ${unstarted.join()}`);
    if (waiting.length > 1)
      problems.push(`${key} has ${waiting.length} occurrences waiting: ${waiting.join()}`);
    if (waiting.length === 1 && waiting[0] !== next[key]) {
      problems.push(`${key} waits as ${waiting[0]} but scheduler-next says ${next[key]}`);
    }
    if (waiting.length === 0 && !running.includes(next[key])) {
      problems.push(`${key} has no waiting occurrence and its next ${next[key]} is not running`);
    }
  }
  for (const [key, ids] of state.unstarted) {
    if (!definitions.includes(key))
      problems.push(`orphan occurrence(s) ${ids.join()} of removed schedule ${key}`);
  }
  const inSets = new Set<string>();
  for (const map of [state.waiting, state.retrying, state.pending, state.active]) {
    for (const ids of map.values()) for (const id of ids) inSets.add(id);
  }
  for (const row of await scanKeys(redis, `${keys.jobPrefix}*`)) {
    const [sk, finished] = await redis.hmget(row, 'sk', 'f');
    const id = row.slice(keys.jobPrefix.length);
    if (sk !== null && finished === null && !inSets.has(id) && (await redis.zscore(keys.dead, id)) === null) {
      problems.push(`row ${id} of schedule ${sk} is in no set`);
    }
  }
  if (problems.length > 0) throw new Error(`Schedule invariants broken on ${queue}:\n${problems.join('\n')}`);
}
