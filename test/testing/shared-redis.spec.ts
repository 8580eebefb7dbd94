import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Redis } from 'ioredis';
import { EchoMqModule, Processor, QueueService } from '@app/echomq';
import { EchoMqTestKit, startRedis, TestRedisError, type TestRedisModuleOptions } from '@app/echomq/testing';
import { redisUrl } from '../support/redis';

// REDIS_URL mode: the kit uses a server it is given (here the suite's own), never stops
// it, and keeps the suite's keys under a prefix of its own, which stop() deletes.

const handled: number[] = [];

@Processor('invoices')
class InvoiceProcessor {
  process(job: { data: { n: number } }): void {
    handled.push(job.data.n);
  }
}

async function keysUnder(redis: Redis, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
    keys.push(...found);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

async function bootOn(options: TestRedisModuleOptions): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [EchoMqModule.forRoot({ ...options, startProcessors: false })],
    providers: [InvoiceProcessor],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('a testing kit on a shared Redis (REDIS_URL)', () => {
  let suiteRedis: Redis;

  beforeAll(() => {
    suiteRedis = new Redis(redisUrl());
  });

  afterAll(async () => {
    await suiteRedis.quit();
  });

  it('uses REDIS_URL when it is set, with a key prefix of its own', async () => {
    const redis = await startRedis();
    try {
      expect(redis.ownsServer).toBe(false);
      expect(redis.url).toBe(process.env.REDIS_URL);
      expect(redis.keyPrefix).toMatch(/^emqt-[0-9a-f]{10}$/);
      expect(redis.moduleOptions).toEqual({ connection: { url: redis.url }, keyPrefix: redis.keyPrefix });
      expect(redis.pid).toBeUndefined();
    } finally {
      await redis.stop();
    }
  });

  it('runs jobs under its prefix, then deletes its keys and leaves the server running', async () => {
    const redis = await startRedis({ url: redisUrl() });
    const prefix = redis.keyPrefix as string;
    const app = await bootOn(redis.moduleOptions);
    const kit = EchoMqTestKit.from(app);
    await app.get(QueueService).enqueueMany('invoices', [{ data: { n: 1 } }, { data: { n: 2 } }]);
    await kit.expectEnqueued('invoices', { data: { n: 2 } });

    expect((await kit.runUntilIdle('invoices')).completed).toBe(2);
    expect(handled.sort()).toEqual([1, 2]);
    const written = await keysUnder(suiteRedis, prefix);
    expect(written).toContain(`${prefix}:{invoices}:metrics`);
    expect(written.every((key) => key.startsWith(`${prefix}:`))).toBe(true);

    await app.close();
    await redis.stop();

    expect(await keysUnder(suiteRedis, prefix)).toEqual([]);
    expect(await suiteRedis.ping()).toBe('PONG');
  });

  it('keeps two kits on one server apart', async () => {
    const [first, second] = await Promise.all([startRedis(), startRedis()]);
    const apps = await Promise.all([bootOn(first.moduleOptions), bootOn(second.moduleOptions)]);
    try {
      await apps[0].get(QueueService).enqueue('invoices', { n: 3 });
      expect(await EchoMqTestKit.from(apps[0]).enqueued('invoices')).toHaveLength(1);
      expect(await EchoMqTestKit.from(apps[1]).enqueued('invoices')).toEqual([]);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
      await Promise.all([first.stop(), second.stop()]);
    }
    expect(await keysUnder(suiteRedis, first.keyPrefix as string)).toEqual([]);
  });

  it('says so when the Redis it is given does not answer', async () => {
    const failure = await startRedis({ url: 'redis://127.0.0.1:1', readyTimeoutMs: 1_000 }).catch((e) => e);
    expect(failure).toBeInstanceOf(TestRedisError);
    expect((failure as Error).message).toContain('The Redis at redis://127.0.0.1:1 does not answer');
  });
});
