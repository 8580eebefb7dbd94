import type { INestApplication } from '@nestjs/common';
import { Cluster } from 'ioredis';
import { QueueService } from '@app/echomq';
import { diagnoseQueue, discoverQueues } from '@app/echomq/doctor';
import { queueKeys } from '@app/echomq/internal';
import { uniquePrefix } from '../cli/support/cli';
import { bootApp } from '../support/nest';
import { RedisCluster } from '../support/redis-cluster';
import { uniqueQueue } from '../support/redis';
import { closeAll } from '../worker/fixtures/support';

/** SCAN calls each master has served so far (INFO commandstats). */
async function scansPerMaster(cluster: RedisCluster): Promise<Map<number, number>> {
  const calls = new Map<number, number>();
  for (const port of cluster.ports) {
    const stats = await cluster.admin(port).info('commandstats');
    calls.set(port, Number(/cmdstat_scan:calls=(\d+)/.exec(stats)?.[1] ?? 0));
  }
  return calls;
}

/**
 * On a cluster, a queue's keys all live on the master that owns its slot (the {queue} hashtag),
 * so the doctor's SCAN passes walk that master only, not every one.
 */
describe('emq doctor on a Redis Cluster', () => {
  const prefix = uniquePrefix();
  let cluster: RedisCluster;
  let app: INestApplication;
  let queues: QueueService;
  let client: Cluster;

  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
    app = await bootApp([], {
      connection: { cluster: { nodes: cluster.nodes } },
      keyPrefix: prefix,
      startProcessors: false,
    });
    queues = app.get(QueueService);
    client = new Cluster(cluster.nodes);
  }, 60_000);

  afterAll(async () => {
    client?.disconnect();
    await closeAll([app]);
    await cluster?.destroy();
  });

  it("scans only the master that owns the queue's slot, and finds what is broken there", async () => {
    const queue = uniqueQueue('clu');
    const keys = queueKeys(queue, prefix);
    const [lost] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
    await client.del(keys.job(lost));
    const slot = Number(await client.cluster('KEYSLOT', keys.base));
    const ranges = await client.cluster('SLOTS');
    const owner = ranges.find(([from, to]) => slot >= from && slot <= to)?.[2][1];
    expect(cluster.ports).toContain(owner);

    const before = await scansPerMaster(cluster);
    const diagnosis = await diagnoseQueue(queues.context(queue));
    const after = await scansPerMaster(cluster);
    expect(diagnosis.findings.map((finding) => [finding.kind, finding.ids])).toEqual([
      ['member-without-row', [lost]],
    ]);
    for (const port of cluster.ports) {
      const scans = after.get(port)! - before.get(port)!;
      if (port === owner) expect(scans).toBeGreaterThan(0);
      else expect(scans).toBe(0);
    }
    // Discovering queues looks on every master: format keys of all queues spread over them.
    expect(await discoverQueues(queues.context(queue).redis, prefix)).toEqual([queue]);
  });
});
