import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { QueueService, partitionTagOf, queueKeys, type JobId } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { RedisCluster } from '../support/redis-cluster';
import { laneIn } from './support/lanes';

/**
 * 'clicks' is a name whose three partitions hash to slots served by three different masters
 * of a three-master cluster (slots split evenly: 0-5460, 5461-10922, 10923-16383): {clicks#0}
 * is slot 10043, {clicks#1} 14106 and {clicks#2} 1913.
 */
const QUEUE = 'clicks';
const SLOTS = [10043, 14106, 1913];

describe('a partitioned queue on a real 3-master Redis Cluster', () => {
  let cluster: RedisCluster;
  let app: INestApplication;
  let queues: QueueService;
  /** A direct connection to the master of each partition, by partition index. */
  const owners: Redis[] = [];

  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
    app = await bootApp([], {
      connection: { cluster: { nodes: cluster.nodes } },
      queues: { [QUEUE]: { partitions: 3 } },
    });
    queues = app.get(QueueService);
    for (const slot of SLOTS) {
      const { host, port } = await cluster.ownerOf(slot);
      owners.push(new Redis({ host, port, lazyConnect: true }));
    }
  }, 60_000);
  afterAll(async () => {
    for (const owner of owners) owner.disconnect();
    await app?.close();
    await cluster?.destroy();
  });

  it('puts each partition under its own hashtag, on three different masters', async () => {
    const slots = await Promise.all([0, 1, 2].map((k) => cluster.slotOf(queueKeys(`${QUEUE}#${k}`).pending)));
    expect(slots).toEqual(SLOTS);
    const masters = await Promise.all(slots.map((slot) => cluster.ownerOf(slot)));
    expect(new Set(masters.map((master) => master.id)).size).toBe(3);
    expect((await queues.partitionLayout(QUEUE)).physical).toEqual([
      QUEUE,
      'clicks#0',
      'clicks#1',
      'clicks#2',
    ]);
  });

  it('enqueues to every shard, and getJob and counts see the jobs as one queue', async () => {
    const ids: JobId[] = [];
    for (let n = 0; n < 3; n++) ids.push(await queues.enqueue(QUEUE, { n }));
    expect(new Set(ids.map(partitionTagOf))).toEqual(new Set([0, 1, 2]));
    for (const id of ids) {
      const k = partitionTagOf(id)!;
      const row = queueKeys(`${QUEUE}#${k}`).job(id);
      expect(row).toBe(`emq:{clicks#${k}}:job:${id}`);
      // The row is on the partition's own master; the other two redirect its slot there.
      const where = await Promise.all(
        owners.map((owner) => owner.exists(row).then(String, (error: Error) => error.message.split(' ')[0])),
      );
      expect(where).toEqual([0, 1, 2].map((index) => (index === k ? '1' : 'MOVED')));
      expect(await queues.getJob(QUEUE, id)).toMatchObject({ id, queue: QUEUE, state: 'pending' });
    }
    expect(await queues.counts(QUEUE)).toEqual({ pending: 3, active: 0, schedule: 0, dead: 0 });
  });

  it('splits a batch of lanes of three partitions into one call per master, ids in input order', async () => {
    const lanes = [0, 1, 2].map((k) => laneIn(k, 3, `t${k}`));
    const jobs = [2, 0, 1, 0, 2].map((k, n) => ({ data: { n }, lane: lanes[k] }));
    const ids = await queues.enqueueMany(QUEUE, jobs);
    for (const [n, id] of ids.entries()) {
      expect(partitionTagOf(id)).toBe([2, 0, 1, 0, 2][n]);
      expect((await queues.getJob(QUEUE, id))?.data).toEqual({ n });
    }
    const pending = await queues.browse(QUEUE, 'pending', { limit: 100 });
    expect(pending).toHaveLength(8);
    expect(pending).toEqual([...pending].sort().reverse());
    const { id } = await queues.submit(QUEUE, 'once', { idempotencyKey: 'click-1' });
    expect(await queues.submit(QUEUE, 'twice', { idempotencyKey: 'click-1' })).toEqual({
      id,
      outcome: 'matched',
    });
    expect((await queues.counts(QUEUE)).pending).toBe(9);
  });
});
