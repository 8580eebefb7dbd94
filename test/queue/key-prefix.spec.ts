import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { InvalidOptionError, Processor, QueueService, type Job } from '@app/echomq';
import { resolveModuleSettings } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

const tag = randomBytes(4).toString('hex');
const PREFIX_A = `tenant-a-${tag}`;
const PREFIX_B = `tenant-b-${tag}`;
/** One queue name served in both applications: only the prefix keeps them apart. */
const SHARED = uniqueQueue('shared');
/** A queue only application A ever uses. */
const ONLY_A = uniqueQueue('only-a');

const seenByA: string[] = [];
const seenByB: string[] = [];

@Processor(SHARED)
class ProcessorA {
  process(job: Job<{ from: string }>) {
    seenByA.push(job.id);
    return { servedBy: 'a', from: job.data.from };
  }
}

@Processor(SHARED)
class ProcessorB {
  process(job: Job<{ from: string }>) {
    seenByB.push(job.id);
    return { servedBy: 'b', from: job.data.from };
  }
}

/** Every key matching a pattern (SCAN, so other suites on the shared Redis are not blocked). */
async function keysMatching(redis: Redis, pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    found.push(...batch);
  } while (cursor !== '0');
  return found.sort();
}

describe('a key prefix per application', () => {
  let redis: Redis;
  let appA: INestApplication;
  let appB: INestApplication;
  let queuesA: QueueService;
  let queuesB: QueueService;

  beforeAll(async () => {
    redis = connect();
    // No nodeId: each application leases its node number, under its own prefix.
    appA = await bootApp([ProcessorA], { keyPrefix: PREFIX_A });
    appB = await bootApp([ProcessorB], { keyPrefix: PREFIX_B });
    queuesA = appA.get(QueueService);
    queuesB = appB.get(QueueService);
  });

  afterAll(async () => {
    await appA?.close();
    await appB?.close();
    await redis.quit();
  });

  it('serves each application its own jobs on one Redis, even on a queue name both use', async () => {
    const fromA = await queuesA.enqueueMany(SHARED, [{ data: { from: 'a' } }, { data: { from: 'a' } }]);
    const fromB = await queuesB.enqueueMany(SHARED, [{ data: { from: 'b' } }]);
    for (const id of fromA) {
      await expect(queuesA.waitFor(SHARED, id, 10_000)).resolves.toEqual({ servedBy: 'a', from: 'a' });
    }
    for (const id of fromB) {
      await expect(queuesB.waitFor(SHARED, id, 10_000)).resolves.toEqual({ servedBy: 'b', from: 'b' });
    }
    expect(seenByA.sort()).toEqual([...fromA].sort());
    expect(seenByB).toEqual(fromB);
    // Neither application can even look a job of the other one up.
    expect(await queuesB.getJob(SHARED, fromA[0])).toBeUndefined();
    expect(await queuesA.getJob(SHARED, fromB[0])).toBeUndefined();
  });

  it("keeps counts, browsing and the registry apart: B sees nothing of A's queue", async () => {
    const delayed = await queuesA.enqueue(ONLY_A, { later: true }, { delayMs: 3_600_000 });
    expect(await queuesA.counts(ONLY_A)).toEqual({ pending: 0, active: 0, schedule: 1, dead: 0 });
    expect(await queuesB.counts(ONLY_A)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await queuesA.browse(ONLY_A, 'schedule')).toEqual([delayed]);
    expect(await queuesB.browse(ONLY_A, 'schedule')).toEqual([]);

    const listedA = await queuesA.listQueues();
    const listedB = await queuesB.listQueues();
    expect(listedA).toEqual(expect.arrayContaining([SHARED, ONLY_A]));
    expect(listedB).toContain(SHARED);
    expect(listedB).not.toContain(ONLY_A);

    await queuesA.pause(ONLY_A);
    expect(await queuesA.isPaused(ONLY_A)).toBe(true);
    expect(await queuesB.isPaused(ONLY_A)).toBe(false);
  });

  it("writes every key under its application's prefix, node leases and registry included", async () => {
    for (const queue of [SHARED, ONLY_A]) {
      const keys = await keysMatching(redis, `*{${queue}}*`);
      expect(keys.length).toBeGreaterThan(0);
      const strays = keys.filter((key) => !key.startsWith(`${PREFIX_A}:`) && !key.startsWith(`${PREFIX_B}:`));
      expect(strays).toEqual([]);
    }
    expect(await keysMatching(redis, `${PREFIX_B}:{${ONLY_A}}:*`)).toEqual([]);
    expect(await redis.smembers(`${PREFIX_A}:queues`)).toEqual(expect.arrayContaining([SHARED, ONLY_A]));
    expect(await redis.sismember('emq:queues', ONLY_A)).toBe(0);
    expect(await redis.get(`${PREFIX_A}:{${SHARED}}:format`)).toBe('1');
    expect(await redis.get(`${PREFIX_B}:{${SHARED}}:format`)).toBe('1');
    expect(await keysMatching(redis, `${PREFIX_A}:node:*`)).toHaveLength(1);
    expect(await keysMatching(redis, `${PREFIX_B}:node:*`)).toHaveLength(1);
  });
});

describe('the keyPrefix option', () => {
  const connection = { url: 'redis://127.0.0.1:1' };
  const settings = (options: Record<string, unknown>) => resolveModuleSettings({ connection, ...options });

  it("defaults to 'emq' and takes 1 to 32 characters from A-Z a-z 0-9 . _ -", () => {
    expect(settings({}).keyPrefix).toBe('emq');
    expect(settings({ keyPrefix: undefined }).keyPrefix).toBe('emq');
    for (const keyPrefix of ['a', 'App_2.staging-eu', 'x'.repeat(32)]) {
      expect(settings({ keyPrefix }).keyPrefix).toBe(keyPrefix);
    }
  });

  it.each([
    ['empty', ''],
    ['33 characters', 'x'.repeat(33)],
    ['a colon', 'emq:staging'],
    ['braces (they would move the cluster hashtag)', '{emq}'],
    ['a glob character (it would widen an ACL pattern)', 'emq*'],
    ['whitespace', 'emq staging'],
    ['a number', 7],
  ])('refuses %s with InvalidOptionError naming keyPrefix', (_what, keyPrefix) => {
    let caught: unknown;
    try {
      settings({ keyPrefix });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(InvalidOptionError);
    expect((caught as InvalidOptionError).option).toBe('keyPrefix');
    expect((caught as InvalidOptionError).message).toMatch(
      /^Option keyPrefix: must be 1 to 32 characters from A-Z a-z 0-9 \. _ -, got /,
    );
  });

  it("refuses ioredis's own keyPrefix, which would split a queue's keys between two prefixes", () => {
    const refused: [Record<string, unknown>, string][] = [
      [{ connection: { ...connection, keyPrefix: 'x:' } }, 'connection.keyPrefix'],
      [
        { connection: { cluster: { nodes: [{ host: 'a', port: 1 }], options: { keyPrefix: 'x:' } } } },
        'connection.cluster.options.keyPrefix',
      ],
    ];
    for (const [options, option] of refused) {
      expect(() => settings(options)).toThrow(
        new InvalidOptionError(option, 'is not supported: use the module option keyPrefix'),
      );
    }
  });

  it('stops the boot before any connection is made', async () => {
    await expect(bootApp([], { keyPrefix: 'bad:prefix' })).rejects.toBeInstanceOf(InvalidOptionError);
  });
});
