import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Redis } from 'ioredis';
import { createApiApp } from '../../../apps/api/src/create-app';
import type { RawEnvironment } from '../../../apps/api/src/config/environment';
import { redisUrl } from '../../support/redis';

export interface RunningApi {
  readonly app: NestExpressApplication;
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Boots the api exactly as main does (createApiApp = module + configureApp) on a free
 * loopback port, against the suite's Redis unless `env` says otherwise.
 */
export async function startApi(env: RawEnvironment = {}): Promise<RunningApi> {
  const app = await createApiApp({ env: { REDIS_URL: redisUrl(), ...env }, logger: ['error'] });
  await app.listen(0, '127.0.0.1');
  const url = await app.getUrl();
  return { app, url, close: () => app.close() };
}

/** Every key (with its serialised value) whose name matches `pattern`, to prove a request wrote nothing. */
export async function keyDump(redis: Redis, pattern = '*'): Promise<Map<string, string>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  const dump = new Map<string, string>();
  for (const key of keys.sort()) {
    const value = await redis.dumpBuffer(key);
    dump.set(key, value ? value.toString('hex') : '');
  }
  return dump;
}

/** The keys of one queue: emq:{queue}:* (uniqueQueue names have no glob characters). */
export function queuePattern(queue: string): string {
  return `emq:{${queue}}:*`;
}
