import type { Redis } from 'ioredis';
import {
  claimJobs,
  enqueueJobs,
  failJob,
  JOB_IDS,
  SnowflakeMinter,
  type NewJobRecord,
  type QueueKeys,
  type RepeatOptions,
  type ScriptContext,
  monotonicMs,
} from '@app/echomq/internal';
import { jobRecord, snapshot } from '../../support/assertions';
import { flowSnapshot } from '../../lifecycle/support/flow';

/** How the job-control loops repeat a chunk whose reply was lost (as QueueService's repeatOnce). */
export const repeat = (): RepeatOptions => ({ untilMs: monotonicMs() + 2_000, retryUnavailable: false });

/** Ids minted `msAgo` before now (the id's time is the job's enqueue time), in mint order. */
export function oldIds(node: number, msAgo: number): () => string {
  const at = Date.now() - msAgo;
  let tick = 0;
  // Each call a millisecond later, so ids minted in order stay in order and apart.
  return JOB_IDS.minter(new SnowflakeMinter(node, () => at + tick++));
}

export async function enqueue(ctx: ScriptContext, records: readonly NewJobRecord[]): Promise<string[]> {
  for (let at = 0; at < records.length; at += 500)
    await enqueueJobs(ctx, records.slice(at, at + 500), 60_000);
  return records.map((record) => record.id);
}

let claims = 0;

/** Enqueues jobs of maxAttempts 1, claims and fails them: they are then dead. */
export async function deadJobs(
  ctx: ScriptContext,
  ids: readonly string[],
  overrides: Parameters<typeof jobRecord>[1] = {},
): Promise<string[]> {
  await enqueue(
    ctx,
    ids.map((id) => jobRecord(id, { maxAttempts: 1, ...overrides })),
  );
  for (let left = ids.length; left > 0;) {
    // A claimant prefix is the claim's request id: each claim needs its own.
    const claimantPrefix = `dead${++claims}`;
    const { jobs } = await claimJobs(ctx, { count: Math.min(500, left), leaseMs: 30_000, claimantPrefix });
    if (jobs.length === 0) throw new Error('nothing to claim');
    for (const job of jobs) await failJob(ctx, job, { error: 'boom', backoffMs: 0, unrecoverable: false });
    left -= jobs.length;
  }
  return [...ids];
}

/** Every key of one queue (uniqueQueue names have no glob characters). */
export async function queueKeysOf(redis: Redis, queue: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', `emq:{${queue}}:*`, 'COUNT', 1000);
    cursor = next;
    found.push(...page);
  } while (cursor !== '0');
  return found.sort();
}

/** Every key of a queue with its dumped value, to prove a refused call wrote nothing. */
export async function dumpQueue(redis: Redis, queue: string): Promise<Map<string, string>> {
  const dump = new Map<string, string>();
  for (const key of await queueKeysOf(redis, queue)) {
    const value = await redis.dumpBuffer(key);
    dump.set(key, value ? value.toString('hex') : '');
  }
  return dump;
}

/**
 * Invariants 1 and 2 over every pending set of every lane and level too (the shared snapshot
 * reads the plain pending set only): each row's job is in exactly one set, each member has its
 * row. Returns the ids of the rows, sorted.
 */
export async function expectEveryRowInOneSet(redis: Redis, keys: QueueKeys): Promise<string[]> {
  const snap = await snapshot(redis, keys);
  const flow = await flowSnapshot(redis, keys);
  const holders = new Map<string, string[]>();
  const hold = (id: string, where: string) => holders.set(id, [...(holders.get(id) ?? []), where]);
  for (const [place, ids] of Object.entries(flow.pending)) for (const id of ids) hold(id, `pending ${place}`);
  for (const state of ['active', 'schedule', 'dead'] as const) {
    for (const id of Object.keys(snap.sets[state])) hold(id, state);
  }
  const problems: string[] = [];
  for (const [id, where] of holders) {
    if (where.length !== 1) problems.push(`${id} is in ${where.join(', ')}`);
    if (!snap.rows[id]) problems.push(`${id} is in ${where.join(', ')} without a row`);
  }
  for (const [id, row] of Object.entries(snap.rows)) {
    if (!holders.has(id) && row.f === undefined) problems.push(`${id} has a row but is in no set`);
  }
  expect(problems).toEqual([]);
  return Object.keys(snap.rows).sort();
}
