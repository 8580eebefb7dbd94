import type { Redis } from 'ioredis';
import {
  STATE_SETS,
  claimJobs,
  enqueueJobs,
  failJob,
  removeJob,
  type ClaimRef,
  type NewJobRecord,
  type QueueKeys,
  type ScriptContext,
  type StateSet,
} from '@app/echomq/internal';

/** The four state sets of one queue (member -> score) and every job row, read at one instant. */
export interface QueueSnapshot {
  readonly sets: Record<StateSet, Record<string, number>>;
  /** Row key suffix (the id) -> fields. */
  readonly rows: Record<string, Record<string, string>>;
}

/** All row keys of one queue (queue names never contain glob characters, so MATCH is exact). */
async function rowIds(redis: Redis, keys: QueueKeys): Promise<string[]> {
  const ids: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${keys.jobPrefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of found) ids.push(key.slice(keys.jobPrefix.length));
  } while (cursor !== '0');
  return ids.sort();
}

/**
 * Reads the four sets and every row of one queue in one MULTI, so the picture is
 * consistent even while other clients work on other queues.
 */
export async function snapshot(redis: Redis, keys: QueueKeys): Promise<QueueSnapshot> {
  const ids = await rowIds(redis, keys);
  const multi = redis.multi();
  for (const state of STATE_SETS) multi.zrange(keys.set(state), 0, -1, 'WITHSCORES');
  for (const id of ids) multi.hgetall(keys.jobPrefix + id);
  const replies = ((await multi.exec()) ?? []).map(([error, value]) => {
    if (error) throw error;
    return value;
  });
  const sets = {} as Record<StateSet, Record<string, number>>;
  STATE_SETS.forEach((state, index) => {
    const flat = replies[index] as string[];
    const members: Record<string, number> = {};
    for (let i = 0; i < flat.length; i += 2) members[flat[i]] = Number(flat[i + 1]);
    sets[state] = members;
  });
  const rows: Record<string, Record<string, string>> = {};
  ids.forEach((id, index) => {
    const fields = replies[STATE_SETS.length + index] as Record<string, string>;
    if (Object.keys(fields).length > 0) rows[id] = fields;
  });
  return { sets, rows };
}

/** Which of the four sets hold this id (a correct queue answers with at most one). */
export function statesOf(snap: QueueSnapshot, id: string): StateSet[] {
  return STATE_SETS.filter((state) => snap.sets[state][id] !== undefined);
}

/**
 * Invariants 1 and 2 of the design: every member of a set is in exactly one set and
 * has its row; a row outside every set is a retained completed job (it has a finish time).
 * Returns the list of violations, empty when the queue is consistent.
 */
export function invariantViolations(snap: QueueSnapshot): string[] {
  const problems: string[] = [];
  const members = new Set<string>();
  for (const state of STATE_SETS) for (const id of Object.keys(snap.sets[state])) members.add(id);
  for (const id of members) {
    const holders = statesOf(snap, id);
    if (holders.length !== 1) problems.push(`${id} is in ${holders.length} sets: ${holders.join(', ')}`);
    if (!snap.rows[id]) problems.push(`${id} is in ${holders.join(', ')} without a row`);
  }
  for (const [id, row] of Object.entries(snap.rows)) {
    if (!members.has(id) && row.f === undefined) problems.push(`${id} has a row but is in no set`);
  }
  return problems;
}

/** Snapshot + invariant check, for the end of a test. */
export async function expectConsistent(redis: Redis, keys: QueueKeys): Promise<QueueSnapshot> {
  const snap = await snapshot(redis, keys);
  expect(invariantViolations(snap)).toEqual([]);
  return snap;
}

/** One entry of a queue's event stream, fields as an object. */
export interface StreamEvent {
  readonly streamId: string;
  readonly fields: Record<string, string>;
}

export async function events(redis: Redis, keys: QueueKeys): Promise<StreamEvent[]> {
  const entries = await redis.xrange(keys.events, '-', '+');
  return entries.map(([streamId, flat]) => {
    const fields: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
    return { streamId, fields };
  });
}

/** The transition counters of one queue, as numbers. */
export async function metrics(redis: Redis, keys: QueueKeys): Promise<Record<string, number>> {
  const raw = await redis.hgetall(keys.metrics);
  return Object.fromEntries(Object.entries(raw).map(([field, value]) => [field, Number(value)]));
}

/** The Redis server clock in ms (the only clock transitions use). */
export async function serverNowMs(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Time passes for one job: its score in `set` moves into the past, on the server's own clock. */
export async function backdate(redis: Redis, key: string, id: string, msAgo = 1000): Promise<void> {
  const now = await serverNowMs(redis);
  const updated = await redis.zadd(key, 'XX', 'CH', now - msAgo, id);
  if (Number(updated) !== 1) throw new Error(`${id} is not a member of ${key}`);
}

/** A record for enqueueJobs with neutral defaults. */
export function jobRecord(id: string, overrides: Partial<Omit<NewJobRecord, 'id'>> = {}): NewJobRecord {
  return {
    id,
    data: '{}',
    name: '',
    maxAttempts: 3,
    delayMs: 0,
    runAtMs: 0,
    idempotencyKey: '',
    ...overrides,
  };
}

/** The ways a claim goes stale. Each leaves the queue in a state the stale call must not change. */
export const STALE_KINDS = [
  'wrong token',
  'wrong claimant',
  'token of an earlier claim',
  'same token, other claimant (counter lost a write)',
  'job failed back to schedule',
  'job back in pending',
  'job in dead',
  'job removed',
] as const;
export type StaleKind = (typeof STALE_KINDS)[number];

/**
 * Sets up one queue with one job and returns a claim on it that is no longer current,
 * in the way `kind` names. The job's current state is reached only through the scripts
 * (and, for "time passing", a score rewritten on the server clock).
 */
export async function staleScenario(
  redis: Redis,
  ctx: ScriptContext,
  id: string,
  kind: StaleKind,
): Promise<ClaimRef> {
  await enqueueJobs(ctx, [jobRecord(id, { maxAttempts: kind === 'job in dead' ? 1 : 5 })], 60_000);
  const claim = async (prefix: string): Promise<ClaimRef> => {
    const [job] = (await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: prefix })).jobs;
    if (job?.id !== id) throw new Error(`claim did not return ${id}`);
    return job;
  };
  const first = await claim('first');
  switch (kind) {
    case 'wrong token':
      return { ...first, attempt: first.attempt + 1 };
    case 'wrong claimant':
      return { ...first, claimant: 'someone-else.0' };
    case 'token of an earlier claim': {
      await failJob(ctx, first, { error: 'x', backoffMs: 0, unrecoverable: false });
      await claim('second');
      return first;
    }
    case 'same token, other claimant (counter lost a write)': {
      await failJob(ctx, first, { error: 'x', backoffMs: 0, unrecoverable: false });
      await redis.hset(ctx.keys.job(id), 'a', String(first.attempt - 1));
      const second = await claim('second');
      if (second.attempt !== first.attempt) throw new Error('the token did not repeat');
      return first;
    }
    case 'job failed back to schedule':
      await failJob(ctx, first, { error: 'x', backoffMs: 60_000, unrecoverable: false });
      return first;
    case 'job back in pending':
      await failJob(ctx, first, { error: 'x', backoffMs: 0, unrecoverable: false });
      return first;
    case 'job in dead':
      await failJob(ctx, first, { error: 'x', backoffMs: 0, unrecoverable: false });
      return first;
    case 'job removed':
      await removeJob(ctx, id);
      return first;
  }
}

/** What a stale call must leave untouched: the four sets, every row (and its TTL), the events, the wake list. */
export async function untouchable(redis: Redis, keys: QueueKeys) {
  const snap = await snapshot(redis, keys);
  // Whether each row expires (a retained completed job) or is kept; the remaining ms tick down on their own.
  const ttls: Record<string, 'kept' | 'expiring'> = {};
  for (const id of Object.keys(snap.rows)) {
    ttls[id] = (await redis.pttl(keys.jobPrefix + id)) === -1 ? 'kept' : 'expiring';
  }
  return {
    snap,
    ttls,
    events: await redis.xlen(keys.events),
    wake: await redis.llen(keys.wake),
  };
}
