import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, partitionRegistryKey, partitionTagOf, type JobId } from '@app/echomq/internal';
import { PartitionDirectory } from '@app/echomq/queue/partitions/partition-directory';
import { recordPartitions } from '@app/echomq/scripts/record-partitions';
import { openMonitor } from '../support/monitor';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

const REGISTRY = partitionRegistryKey();

/**
 * Lets `ms` of this process's clock pass. The directory decides by the age of its copy, and no
 * event marks a copy growing old: time passing is what is tested.
 */
const lettingTimePass = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the partitions registry and the copy each process keeps', () => {
  let redis: Redis;
  const apps: INestApplication[] = [];

  beforeAll(() => {
    redis = connect();
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  afterAll(async () => {
    await redis.quit();
  });

  const boot = async (options: Parameters<typeof bootApp>[1] = {}): Promise<QueueService> => {
    const app = await bootApp([], options);
    apps.push(app);
    return app.get(QueueService);
  };

  it('is read again before it is used once it is older than twice the refresh interval', async () => {
    const queue = uniqueQueue('stale');
    await recordPartitions(redis, 'emq', queue, 2);
    const refreshMs = 40;
    const quiet = new PartitionDirectory(
      () => redis,
      'emq',
      () => undefined,
      (work) => work(),
      refreshMs,
    );
    expect((await quiet.layout(queue)).count).toBe(2);
    await recordPartitions(redis, 'emq', queue, 4);
    await lettingTimePass(3 * refreshMs);
    // The first call after the quiet spell acts on the count recorded meanwhile.
    expect(await quiet.layout(queue)).toMatchObject({
      count: 4,
      physical: [queue, ...[0, 1, 2, 3].map((k) => `${queue}#${k}`)],
    });

    // A copy younger than the interval is used as it is, with no round trip.
    const busy = new PartitionDirectory(
      () => redis,
      'emq',
      () => undefined,
      (work) => work(),
      60_000,
    );
    expect((await busy.layout(queue)).count).toBe(4);
    await recordPartitions(redis, 'emq', queue, 3);
    expect((await busy.layout(queue)).count).toBe(4);
  });

  it('gets no entry for a queue declared with 1 partition, and a 1 over an existing entry is recorded', async () => {
    const plain = uniqueQueue('one');
    const others = [uniqueQueue('tenant'), uniqueQueue('tenant')];
    const queues = await boot({ defaults: { partitions: 1 }, queues: { [plain]: { partitions: 1 } } });
    for (const queue of [plain, ...others]) await queues.enqueue(queue, 'x');
    for (const queue of [plain, ...others]) {
      expect(await redis.hexists(REGISTRY, queue)).toBe(0);
      expect(await redis.hexists(REGISTRY, `${queue}#max`)).toBe(0);
    }

    const back = uniqueQueue('back-to-one');
    await (await boot({ queues: { [back]: { partitions: 3 } } })).enqueue(back, 'with 3');
    await (await boot({ queues: { [back]: { partitions: 1 } } })).enqueue(back, 'with 1');
    expect(await redis.hmget(REGISTRY, back, `${back}#max`)).toEqual(['1', '3']);
  });

  it('loses the entry of a queue obliterated whole, so a queue made again under its name is unpartitioned', async () => {
    const queue = uniqueQueue('gone');
    await (await boot({ queues: { [queue]: { partitions: 4 } } })).enqueue(queue, 'x');
    await apps.pop()!.close();
    const api = await boot();
    expect((await api.partitionLayout(queue)).count).toBe(4);
    // A partition obliterated by its own name leaves the others, and the entry.
    await api.obliterate(`${queue}#1`);
    expect(await redis.hmget(REGISTRY, queue, `${queue}#max`)).toEqual(['4', '4']);
    await api.obliterate(queue);
    expect(await redis.hmget(REGISTRY, queue, `${queue}#max`)).toEqual([null, null]);
    expect(await api.partitionLayout(queue)).toEqual({
      queue,
      count: 1,
      physical: [queue],
      partitioned: false,
    });
    const fresh = await boot();
    expect(await fresh.partitionLayout(queue)).toEqual({
      queue,
      count: 1,
      physical: [queue],
      partitioned: false,
    });
    const id = await fresh.enqueue(queue, 'anew');
    expect(await fresh.getJob(queue, id)).toMatchObject({ queue, data: 'anew' });
  });

  it('gets its count back from a declaring process whose read finds it missing or changed', async () => {
    const queue = uniqueQueue('repair');
    const refreshMs = 40;
    const declaring = new PartitionDirectory(
      () => redis,
      'emq',
      () => 3,
      (work) => work(),
      refreshMs,
    );
    await declaring.layout(queue);
    expect(await redis.hmget(REGISTRY, queue, `${queue}#max`)).toEqual(['3', '3']);

    await redis.hdel(REGISTRY, queue, `${queue}#max`); // the registry lost (a flush, a failover)
    await lettingTimePass(3 * refreshMs);
    await declaring.layout(queue);
    expect(await redis.hmget(REGISTRY, queue, `${queue}#max`)).toEqual(['3', '3']);

    await recordPartitions(redis, 'emq', queue, 2); // another count recorded meanwhile
    await lettingTimePass(3 * refreshMs);
    await declaring.layout(queue);
    expect(await redis.hmget(REGISTRY, queue, `${queue}#max`)).toEqual(['3', '3']);
  });
});

describe('a queue whose count is back to 1', () => {
  it('looks a job up in the queue itself first, where its new jobs are', async () => {
    const redis = connect();
    const monitor = await openMonitor();
    const queue = uniqueQueue('back');
    const three = await bootApp([], { queues: { [queue]: { partitions: 3 } } });
    const one = await bootApp([], { queues: { [queue]: { partitions: 1 } } });
    try {
      await three.get(QueueService).enqueue(queue, 'with 3');
      const queues = one.get(QueueService);
      expect(await queues.partitionLayout(queue)).toMatchObject({ count: 1, partitioned: true });
      // A job of the queue itself whose id happens to name one of its partitions.
      let id: JobId = await queues.enqueue(queue, 'with 1');
      while (partitionTagOf(id)! >= 3) id = await queues.enqueue(queue, 'with 1');
      const probed: string[] = [];
      monitor.on('monitor', (_time: string, args: string[]) => {
        for (const arg of args) if (arg.includes(id) && arg.includes(`{${queue}`)) probed.push(arg);
      });
      expect(await queues.getJob(queue, id)).toMatchObject({ state: 'pending', data: 'with 1' });
      const marker = `end-${queue}`;
      const ended = new Promise<void>((resolve) =>
        monitor.on('monitor', (_time: string, args: string[]) => args.includes(marker) && resolve()),
      );
      await redis.echo(marker);
      await ended;
      expect(probed.length).toBeGreaterThan(0);
      expect(probed.filter((key) => key.includes(`{${queue}#`))).toEqual([]);
    } finally {
      monitor.disconnect();
      await one.close();
      await three.close();
      await redis.quit();
    }
  });
});
