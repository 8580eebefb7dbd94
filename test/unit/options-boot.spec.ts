import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { EchoMqModule, InvalidOptionError, QueueService, type EchoMqModuleOptions } from '@app/echomq';
import { RedisServer } from '../support/redis-server';
import { redisUrl, uniqueQueue } from '../support/redis';

// A Redis of its own, so "nothing was written" is this suite's DBSIZE alone.
let server: RedisServer;
let redis: Redis;

beforeAll(async () => {
  server = await RedisServer.start();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis.disconnect();
  // EchoMQ's own client outlives a failed compile (Nest runs no shutdown hooks then);
  // with no retry strategy it ends, instead of reconnecting, when the server goes.
  await server.destroy();
});

/** Options that are fine but for `bad`; nodeId is fixed, so no node lease is written. */
function withBad(bad: Partial<Record<keyof EchoMqModuleOptions, unknown>>): EchoMqModuleOptions {
  return {
    connection: { url: server.url, retryStrategy: () => null },
    nodeId: 7,
    ...bad,
  } as EchoMqModuleOptions;
}

async function bootRefusal(compiling: Promise<unknown>): Promise<InvalidOptionError> {
  const error: unknown = await compiling.then(
    () => new Error('the application booted'),
    (refused: unknown) => refused,
  );
  if (!(error instanceof InvalidOptionError)) throw error;
  return error;
}

describe('booting EchoMqModule with a bad option', () => {
  const queue = uniqueQueue('boot');

  it.each([
    ['reaper.batch', { reaper: { batch: 0 } }],
    ['idempotencyTtlMs', { idempotencyTtlMs: 0 }],
    [`queues.${queue}.concurrency`, { queues: { [queue]: { concurrency: 0 } } }],
    ['defaults.backoff.jitter', { defaults: { backoff: { type: 'exponential', delayMs: 1, jitter: 2 } } }],
  ])('fails the boot naming %s, and writes nothing', async (option, bad) => {
    const error = await bootRefusal(
      Test.createTestingModule({ imports: [EchoMqModule.forRoot(withBad(bad))] }).compile(),
    );
    expect(error.option).toBe(option);
    expect(await redis.dbsize()).toBe(0);
  });

  it('fails a forRootAsync boot whose factory returns a bad value', async () => {
    const error = await bootRefusal(
      Test.createTestingModule({
        imports: [EchoMqModule.forRootAsync({ useFactory: () => withBad({ eventsMaxLen: 1_000.5 }) })],
      }).compile(),
    );
    expect(error.option).toBe('eventsMaxLen');
    expect(await redis.dbsize()).toBe(0);
  });

  it('refuses a url left undefined by an unset variable instead of connecting to localhost:6379', async () => {
    // lazyConnect: were the boot to go on, nothing here should dial a Redis that may not exist.
    const options = withBad({ connection: { url: process.env.ECHOMQ_SURELY_UNSET, lazyConnect: true } });
    const error = await bootRefusal(
      Test.createTestingModule({ imports: [EchoMqModule.forRoot(options)] }).compile(),
    );
    expect(error.option).toBe('connection.url');
  });
});

describe('booting EchoMqModule with good options', () => {
  it('takes isGlobal as an extra of forRoot and forRootAsync, not as an unknown option', async () => {
    const options = { connection: { url: redisUrl() }, nodeId: 8 };
    for (const imported of [
      EchoMqModule.forRoot({ ...options, isGlobal: true }),
      EchoMqModule.forRootAsync({ isGlobal: false, useFactory: () => options }),
    ]) {
      const moduleRef = await Test.createTestingModule({ imports: [imported] }).compile();
      const app = moduleRef.createNestApplication({ logger: ['error'] });
      await app.init();
      expect(app.get(QueueService).settings.commandTimeoutMs).toBe(5_000);
      await app.close();
    }
  });
});
