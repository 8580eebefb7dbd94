import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  installScripts,
  JOB_IDS,
  queueKeys,
  SnowflakeMinter,
  type ScriptContext,
} from '@app/echomq/internal';

/** The suite's Redis, started by global-setup (or the caller's REDIS_URL). */
export function redisUrl(): string {
  const url = process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: run the tests through jest (npm test)');
  return url;
}

export function connect(): Redis {
  return new Redis(redisUrl());
}

/** A queue name no other test uses, so suites can share one Redis in parallel. */
export function uniqueQueue(prefix = 'q'): string {
  return `${prefix}-${randomBytes(6).toString('hex')}`;
}

export function scriptContext(redis: Redis, queue: string, eventsMaxLen = 1000): ScriptContext {
  return { redis: installScripts(redis), keys: queueKeys(queue), eventsMaxLen };
}

/** Mints valid job ids for tests that call the scripts directly. */
export function idMinter(node = 1): () => string {
  return JOB_IDS.minter(new SnowflakeMinter(node));
}
