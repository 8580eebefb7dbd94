import type { INestApplication } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { QueueService, queueKeys, type Job } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { RedisCluster } from '../support/redis-cluster';
import { uniqueQueue } from '../support/redis';
import { DeferredMap, processorClass, withTimeout } from '../worker/fixtures/support';

/**
 * On a Cluster the queues' cancels streams live on different nodes, and one XREAD cannot name
 * keys of different slots: each served queue gets a reader of its own. Removing an active job
 * of each queue aborts each handler long before a heartbeat of the one-minute lease.
 */
describe('cancellation on a real Redis Cluster', () => {
  let cluster: RedisCluster;
  let client: Cluster;
  let app: INestApplication;
  const queues: string[] = [];
  const started = new DeferredMap<Job>();
  const aborted = new DeferredMap<unknown>();

  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
    client = new Cluster(cluster.nodes);
    // Two queues on different masters, so their streams cannot share one read.
    const ranges = await client.cluster('SLOTS');
    const masterOf = async (queue: string): Promise<number> => {
      const slot = Number(await client.cluster('KEYSLOT', queueKeys(queue).cancels));
      return ranges.findIndex(([from, to]) => slot >= from && slot <= to);
    };
    queues.push(uniqueQueue('cc'));
    for (let tries = 0; tries < 1000 && queues.length < 2; tries++) {
      const queue = uniqueQueue('cc');
      if ((await masterOf(queue)) !== (await masterOf(queues[0]))) queues.push(queue);
    }
    const processors = queues.map((queue) =>
      processorClass(queue, { leaseMs: 60_000 }, async (job) => {
        const abort = new Promise<void>((resolve) =>
          job.signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        started.get(job.id).resolve(job);
        await abort;
        aborted.get(job.id).resolve(job.signal.reason);
        return 'late';
      }),
    );
    app = await bootApp(processors, { connection: { cluster: { nodes: cluster.nodes } } });
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    client?.disconnect();
    await cluster?.destroy();
  });

  it('aborts the removed job of each queue, whichever node holds its stream', async () => {
    const service = app.get(QueueService);
    expect(queues).toHaveLength(2);
    const ids = await Promise.all(queues.map((queue) => service.enqueue(queue, {})));
    await Promise.all(ids.map((id) => started.get(id).promise));

    await Promise.all(queues.map((queue, at) => service.remove(queue, ids[at])));
    const reasons = await withTimeout(
      Promise.all(ids.map((id) => aborted.get(id).promise)),
      10_000,
      'both handlers to be aborted',
    );
    for (const reason of reasons) expect((reason as Error).message).toMatch(/removed/);
  });
});
