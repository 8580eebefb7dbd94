import type { Redis } from 'ioredis';
import { STATE_SETS, type QueueKeys, type StateSet } from '@app/echomq/internal';
import { RedisServer } from '../../support/redis-server';

/** A redis-server of a test's own that refuses growing writes once full (maxmemory-policy noeviction). */
export function startNoEvictionServer(maxmemory = '0'): Promise<RedisServer> {
  return RedisServer.start({ args: ['--maxmemory-policy', 'noeviction', '--maxmemory', maxmemory] });
}

/**
 * Makes Redis full at once, whatever it holds: a maxmemory of one byte is below any usage,
 * so every command that may grow memory is refused, as on a Redis that filled up.
 */
export async function fill(admin: Redis): Promise<void> {
  await admin.config('SET', 'maxmemory', '1');
}

/** Lifts the limit again (maxmemory 0: none). */
export async function makeRoom(admin: Redis): Promise<void> {
  await admin.config('SET', 'maxmemory', '0');
}

/** Whether Redis refuses a growing write now: the proof that a step really ran on a full Redis. */
export async function refusesWrites(admin: Redis): Promise<boolean> {
  try {
    await admin.set(`probe:${Date.now()}`, 'x');
    return false;
  } catch (error) {
    if (/^OOM /.test((error as Error).message)) return true;
    throw error;
  }
}

/**
 * The four sets of a queue, member -> score, read with a pipeline: a full Redis refuses every
 * command queued in a MULTI (reads too), so the test support's MULTI snapshot cannot run then.
 */
export async function stateSets(
  admin: Redis,
  keys: QueueKeys,
): Promise<Record<StateSet, Record<string, number>>> {
  const pipeline = admin.pipeline();
  for (const state of STATE_SETS) pipeline.zrange(keys.set(state), 0, -1, 'WITHSCORES');
  const replies = (await pipeline.exec()) ?? [];
  const sets = {} as Record<StateSet, Record<string, number>>;
  STATE_SETS.forEach((state, index) => {
    const [error, flat] = replies[index] as [Error | null, string[]];
    if (error) throw error;
    const members: Record<string, number> = {};
    for (let i = 0; i < flat.length; i += 2) members[flat[i]] = Number(flat[i + 1]);
    sets[state] = members;
  });
  return sets;
}

/** used_memory of the server, in bytes. */
export async function usedMemory(admin: Redis): Promise<number> {
  const info = await admin.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
}
