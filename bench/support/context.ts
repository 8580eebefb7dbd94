import type { Redis } from 'ioredis';
import type { BenchConfig } from '../config';
import type { QueueSystem } from '../systems/types';
import type { BenchRedisServer } from './redis-server';
import type { WorkerPool } from './worker-pool';

/** What every figure gets: the settings, the one Redis, the systems in round order, the worker hosts. */
export interface BenchContext {
  readonly config: BenchConfig;
  readonly redis: BenchRedisServer;
  /** The benchmark's own connection: FLUSHALL and INFO only. */
  readonly admin: Redis;
  readonly systems: readonly QueueSystem[];
  readonly pool: WorkerPool;
  /** Progress lines, on stderr (stdout carries only the final table). */
  log(line: string): void;
}
