import type { INestApplication } from '@nestjs/common';
import { Cluster } from 'ioredis';
import {
  Processor,
  QueueService,
  RedisVersionCheck,
  RedisVersionError,
  queueKeys,
  type Job,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { clusterConnection, clusterPerSuite } from '../support/cluster-suite';
import { uniqueQueue } from '../support/redis';

/** Queue names, one per master of the cluster (picked once the cluster is up). */
const QUEUES: string[] = [];

function echoProcessor(queue: string): new () => object {
  @Processor(queue, { concurrency: 5, retainCompletedMs: 60_000 })
  class Echo {
    process(job: Job<{ n: number }>) {
      return { queue: job.queue, n: job.data.n, attempt: job.attempt };
    }
  }
  return Echo;
}

/**
 * DESIGN §7: every key of a queue carries the {queue} hashtag, so each transition runs on
 * one node, and queues spread over the cluster's masters. A real cluster of three
 * redis-server processes on loopback, not a simulation.
 */
describe('EchoMQ on a real Redis Cluster', () => {
  let app: INestApplication;
  let client: Cluster;
  const suite = clusterPerSuite(3, {}, async () => {
    await app?.close();
    client?.disconnect();
  });

  beforeAll(async () => {
    const cluster = suite.cluster;
    client = new Cluster(cluster.nodes);
    // One queue per master, so the test shows queues spreading over the shards.
    const ranges = await client.cluster('SLOTS');
    const taken = new Set<number>();
    for (let tries = 0; tries < 1000 && taken.size < ranges.length; tries++) {
      const queue = uniqueQueue('c');
      const slot = Number(await client.cluster('KEYSLOT', queueKeys(queue).pending));
      const master = ranges.findIndex(([from, to]) => slot >= from && slot <= to);
      if (!taken.has(master)) {
        taken.add(master);
        QUEUES.push(queue);
      }
    }
    app = await bootApp(QUEUES.map(echoProcessor), { connection: clusterConnection(cluster) });
  });

  it('checks the Redis version on every master, even when asked before the cluster is ready', async () => {
    const fresh = new Cluster(suite.cluster.nodes);
    try {
      const errors: string[] = [];
      const logger = { debug: () => undefined, error: (message: string) => void errors.push(message) };
      // Asked at once: the node list is still empty, and a check over no node must not pass.
      const check = new RedisVersionCheck(fresh, logger, '99.0.0');
      await expect(check.verified()).rejects.toBeInstanceOf(RedisVersionError);
      expect(errors.length).toBeGreaterThanOrEqual(1);
      await expect(new RedisVersionCheck(fresh, logger).verified()).resolves.toBeUndefined();
    } finally {
      fresh.disconnect();
    }
  });

  it('keeps each queue on one slot and spreads the queues over the masters', async () => {
    const owners = new Set<string>();
    for (const queue of QUEUES) {
      const keys = queueKeys(queue);
      const slots = new Set(
        await Promise.all(
          [
            keys.pending,
            keys.active,
            keys.schedule,
            keys.dead,
            keys.events,
            keys.jobPrefix + 'JOB00000000000',
          ].map(async (key) => Number(await client.cluster('KEYSLOT', key))),
        ),
      );
      expect(slots.size).toBe(1);
      const [slot] = [...slots];
      const ranges = await client.cluster('SLOTS');
      const owner = ranges.find(([from, to]) => slot >= from && slot <= to)!;
      owners.add(String(owner[2][1]));
    }
    expect(owners.size).toBe(3);
  });

  it('runs the whole lifecycle on every queue: enqueue (one and many), claim, complete, delayed jobs, reads', async () => {
    const queues = app.get(QueueService);
    for (const queue of QUEUES) {
      const many = await queues.enqueueMany(
        queue,
        Array.from({ length: 20 }, (_, n) => ({ data: { n } })),
      );
      const single = await queues.enqueue(queue, { n: 20 });
      const delayed = await queues.enqueue(queue, { n: 21 }, { delayMs: 200 });
      const results = await Promise.all(
        [...many, single, delayed].map((id) => queues.waitFor(queue, id, 20_000)),
      );
      expect(results).toEqual(Array.from({ length: 22 }, (_, n) => ({ queue, n, attempt: 1 })));
      expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
      expect((await queues.getJob(queue, delayed))?.state).toBe('completed');
      expect((await queues.metrics(queue)).completed).toBe(22);
    }
    expect((await queues.listQueues()).filter((name) => QUEUES.includes(name)).sort()).toEqual(
      [...QUEUES].sort(),
    );
  });
});
