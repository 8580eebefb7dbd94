import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { closeAll } from '../worker/fixtures/support';
import { connect } from './redis';

/** What `useAppsAndRedis` keeps for the enclosing block. */
export interface AppsAndRedis {
  /** Push each application a test boots here: all are closed after that test, even when one close fails. */
  readonly apps: INestApplication[];
  /** A plain connection for the whole block, to read and break Redis with; set once beforeAll ran. */
  readonly redis: Redis;
}

/** The applications the enclosing block's tests boot (push them here): all are closed after each test, even when one close fails. */
export function useApps(): INestApplication[] {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await closeAll(apps.splice(0));
  });
  return apps;
}

/**
 * The shape most worker specs share: one plain Redis connection for the enclosing block, and
 * the applications each test boots, closed after it so no claim loop outlives its test.
 */
export function useAppsAndRedis(): AppsAndRedis {
  const apps = useApps();
  let redis: Redis | undefined;
  beforeAll(() => {
    redis = connect();
  });
  afterAll(() => {
    redis?.disconnect();
  });
  return {
    apps,
    get redis() {
      if (!redis) throw new Error('useAppsAndRedis: redis read before beforeAll connected it');
      return redis;
    },
  };
}
