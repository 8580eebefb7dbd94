import type { INestApplication } from '@nestjs/common';
import { QueueService, queueKeys, QUEUE_REGISTRY_KEY, type QueueKeys } from '@app/echomq/internal';
import { Redis } from 'ioredis';
import { bootApp } from '../support/nest';

/** A producer-only application (no processors, so no claim loop or reaper) and its QueueService. */
export async function producer(): Promise<{ app: INestApplication; queues: QueueService }> {
  const app = await bootApp([]);
  return { app, queues: app.get(QueueService) };
}

/** The keys that exist under one queue's base (SCAN: a test's own queue only). */
export async function queueKeysPresent(redis: Redis, queue: string): Promise<string[]> {
  const keys: QueueKeys = queueKeys(queue);
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${keys.base}*`, 'COUNT', 1000);
    found.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
}

/** Whether the queue is in the registry (enqueue registers it before its first write). */
export async function registered(redis: Redis, queue: string): Promise<boolean> {
  return (await redis.sismember(QUEUE_REGISTRY_KEY, queue)) === 1;
}
