import type { QueueService } from '@app/echomq';
import type { Redis } from 'ioredis';
import { keyDump } from '../../api/support/api';
import type { Seeded } from './hostile-http-jobs';

/**
 * Puts something worth not touching in the queue before the hostile input: a pending job, one
 * in a lane at a priority, a delayed one, one under an idempotency key, a schedule with its
 * next occurrence, stored limits and a lane's settings. Reads then have jobs to find, and a
 * malformed write that slipped through would show as a changed key.
 */
export async function seedQueue(
  queues: QueueService,
  queue: string,
  limits: { readonly bodyLimit: number; readonly payloadLimit: number },
): Promise<Seeded> {
  const pendingId = await queues.enqueue(queue, { seed: 'pending' });
  const laneId = await queues.enqueue(queue, { seed: 'vip' }, { lane: 'vip', priority: 5 });
  const delayedId = await queues.enqueue(queue, { seed: 'later' }, { delayMs: 600_000 });
  const keyedId = await queues.enqueue(queue, { seed: 'keyed' }, { idempotencyKey: 'seed-key' });
  const scheduleKey = 'nightly';
  const schedule = await queues.upsertSchedule(queue, scheduleKey, { everyMs: 3_600_000 }, { data: 'tick' });
  await queues.setLimits(queue, { globalConcurrency: 50 });
  await queues.setLane(queue, 'vip', { weight: 3 });
  return {
    queue,
    pendingId,
    ids: [pendingId, laneId, delayedId, keyedId, schedule.nextId],
    scheduleKey,
    ...limits,
  };
}

export interface KeySnapshot {
  readonly size: number;
  readonly dump: ReadonlyMap<string, string>;
}

export async function snapshotKeys(redis: Redis): Promise<KeySnapshot> {
  return { size: await redis.dbsize(), dump: await keyDump(redis) };
}

/** Keys added, removed or changed between two snapshots (a few named). */
export function keyChanges(before: KeySnapshot, after: KeySnapshot): { count: number; sample: string[] } {
  const changes: string[] = [];
  for (const [key, value] of after.dump) {
    const old = before.dump.get(key);
    if (old === undefined) changes.push(`+${key}`);
    else if (old !== value) changes.push(`~${key}`);
  }
  for (const key of before.dump.keys()) if (!after.dump.has(key)) changes.push(`-${key}`);
  return { count: changes.length, sample: changes.slice(0, 5) };
}
