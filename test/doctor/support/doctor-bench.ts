import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService } from '@app/echomq';
import { queueKeys, type QueueKeys, type ScriptContext } from '@app/echomq/internal';
import { uniquePrefix } from '../../cli/support/cli';
import { bootApp } from '../../support/nest';
import { connect, uniqueQueue } from '../../support/redis';
import { closeAll } from '../../worker/fixtures/support';
import { prefixedContext } from './doctor';

/** What a doctor spec works on: a producer app under its own prefix, and a fresh queue per test. */
export interface DoctorBench {
  readonly prefix: string;
  readonly app: INestApplication;
  readonly queues: QueueService;
  readonly redis: Redis;
  readonly queue: string;
  readonly keys: QueueKeys;
  readonly ctx: ScriptContext;
}

/**
 * Registers the hooks that boot a producer (no processors, node `nodeId`) on a prefix of its
 * own, mint a queue named after `label` before each test, and close everything after.
 */
export function doctorBench(label: string, nodeId: number): DoctorBench {
  const prefix = uniquePrefix();
  let booted: { app: INestApplication; queues: QueueService; redis: Redis } | undefined;
  let current: { queue: string; keys: QueueKeys; ctx: ScriptContext } | undefined;
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the doctor bench is used outside its hooks');
    return value;
  };

  beforeAll(async () => {
    const app = await bootApp([], { keyPrefix: prefix, startProcessors: false, nodeId });
    booted = { app, queues: app.get(QueueService), redis: connect() };
  });
  beforeEach(() => {
    const queue = uniqueQueue(label);
    current = {
      queue,
      keys: queueKeys(queue, prefix),
      ctx: prefixedContext(ready(booted).redis, queue, prefix),
    };
  });
  afterAll(async () => {
    booted?.redis.disconnect();
    await closeAll(booted ? [booted.app] : []);
  });

  return {
    prefix,
    get app() {
      return ready(booted).app;
    },
    get queues() {
      return ready(booted).queues;
    },
    get redis() {
      return ready(booted).redis;
    },
    get queue() {
      return ready(current).queue;
    },
    get keys() {
      return ready(current).keys;
    },
    get ctx() {
      return ready(current).ctx;
    },
  };
}
