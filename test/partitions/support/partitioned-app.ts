import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService } from '@app/echomq/internal';
import { bootApp } from '../../support/nest';
import { connect } from '../../support/redis';

/** One application (no processors) a describe block shares, and a plain connection to read Redis with. */
export interface PartitionedApp {
  readonly redis: Redis;
  readonly app: INestApplication;
  readonly queues: QueueService;
}

/**
 * Boots one application with `options` (a partitioned queue's specs pass `defaults.partitions`)
 * before the enclosing block's tests and closes it after them. The fields are read inside tests,
 * once beforeAll has set them.
 */
export function usePartitionedApp(options: Parameters<typeof bootApp>[1]): PartitionedApp {
  let redis: Redis | undefined;
  let app: INestApplication | undefined;
  let queues: QueueService | undefined;
  beforeAll(async () => {
    redis = connect();
    app = await bootApp([], options);
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app?.close();
    await redis?.quit();
  });
  const booted = <T>(value: T | undefined): T => {
    if (value === undefined)
      throw new Error('usePartitionedApp: read before beforeAll booted the application');
    return value;
  };
  return {
    get redis() {
      return booted(redis);
    },
    get app() {
      return booted(app);
    },
    get queues() {
      return booted(queues);
    },
  };
}
