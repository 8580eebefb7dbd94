import type { Redis } from 'ioredis';
import { queueKeys } from '@app/echomq/internal';
import { serverNowMs } from '../../support/assertions';

/**
 * Time passes for one waiting occurrence while no process runs: its run-at (the score) and its
 * planned run-at (row 'sa') move `msAgo` into the past on the server clock, as if it had come
 * due that long ago with nobody there to promote it. Returns the new planned run-at.
 */
export async function makeOverdue(redis: Redis, queue: string, id: string, msAgo: number): Promise<number> {
  const keys = queueKeys(queue);
  const plannedAt = (await serverNowMs(redis)) - msAgo;
  const moved = await redis.zadd(keys.schedule, 'XX', 'CH', plannedAt, id);
  if (Number(moved) !== 1) throw new Error(`${id} does not wait in the schedule set of ${queue}`);
  await redis.hset(keys.job(id), 'sa', plannedAt);
  return plannedAt;
}
