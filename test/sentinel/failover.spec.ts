import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { QueueService, type Job } from '@app/echomq';
import { nodeLeaseKey, RedisConnections } from '@app/echomq/internal';
import { JOB_ID_MINTER, type JobIdMinter } from '@app/echomq/module/tokens';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { SentinelGroup, type Address } from '../support/redis-sentinel';
import { closeAll, DeferredMap, processorClass, waitUntil, withTimeout } from '../worker/fixtures/support';

/**
 * Redis Sentinel (`connection: { sentinels, name }`): a worker and a producer that reach the
 * master through three sentinels keep working across a failover by themselves, with no restart.
 * The master is SIGKILLed; the sentinels promote the replica; every EchoMQ connection of both
 * applications is then found on the new master: the command connection, the worker's wake
 * BLPOP, the cancels and event readers' XREAD, and the node leases' renewals.
 */
const RECOVERS_MS = 30_000;

let group: SentinelGroup;
/** The master the first test killed: the second brings it back as a replica. */
let killed: Address | undefined;
const apps: INestApplication[] = [];
const direct: Redis[] = [];

beforeAll(async () => {
  group = await SentinelGroup.start();
}, 60_000);

afterAll(async () => {
  await closeAll(apps.splice(0));
  for (const client of direct) client.disconnect();
  await group?.destroy();
});

async function boot(providers: Parameters<typeof bootApp>[0]): Promise<INestApplication> {
  // No nodeId: ids are minted on leased node numbers, whose renewals must follow the master too.
  const app = await bootApp(providers, {
    connection: group.connection(),
    shutdownGraceMs: 300,
    commandTimeoutMs: 5_000,
  });
  apps.push(app);
  return app;
}

function clientOf(address: Address): Redis {
  const client = new Redis({ host: address.host, port: address.port });
  direct.push(client);
  return client;
}

/** Commands the master's clients are blocked in now (CLIENT LIST: flag b), counted by name. */
async function blockedCommands(master: Redis): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const line of String(await master.client('LIST')).split('\n')) {
    const cmd = / cmd=(\S+)/.exec(line)?.[1];
    if (cmd && / flags=\S*b/.test(line)) counts[cmd] = (counts[cmd] ?? 0) + 1;
  }
  return counts;
}

/** Resolves once the lease key of `app`'s node is renewed on `master` (its TTL goes back up). */
async function leaseRenewedOn(master: Redis, app: INestApplication): Promise<void> {
  const minter = app.get<JobIdMinter>(JOB_ID_MINTER);
  let last = Infinity;
  await waitUntil(
    async () => {
      if (minter.node === undefined) return false;
      const ttl = await master.pttl(nodeLeaseKey(minter.node));
      const renewed = ttl > last;
      last = ttl;
      return renewed;
    },
    'a node lease renewal on the new master',
    RECOVERS_MS,
  );
}

describe('through Redis Sentinel', () => {
  it('a worker and a producer follow the new master by themselves after the master is killed', async () => {
    const queue = uniqueQueue('sentinel');
    const ran = new DeferredMap<number>();
    const Proc = processorClass(queue, { leaseMs: 2_000, concurrency: 4 }, (job: Job<number>) => {
      ran.get(job.id).resolve(job.attempt);
      return job.data;
    });
    const worker = await boot([Proc]);
    const producer = await boot([]);
    const queues = producer.get(QueueService);
    const completed = new DeferredMap<void>();
    await queues.subscribe(queue, (event) => {
      if (event.type === 'completed') for (const id of event.ids) completed.get(id).resolve();
    });

    const before = await Promise.all([1, 2, 3].map((n) => queues.enqueue(queue, n)));
    await withTimeout(Promise.all(before.map((id) => completed.get(id).promise)), 10_000, 'jobs before');

    const { old, master } = await group.failover();
    killed = old;

    // The same applications, untouched: the enqueue waits out the failover and resolves.
    const after = await withTimeout(
      Promise.all([4, 5, 6].map((n) => queues.enqueue(queue, n))),
      RECOVERS_MS,
      'enqueues after the failover',
    );
    await withTimeout(Promise.all(after.map((id) => ran.get(id).promise)), RECOVERS_MS, 'handlers after');
    // Completed events of jobs run after the failover reach the subscriber: its reader followed.
    await withTimeout(Promise.all(after.map((id) => completed.get(id).promise)), RECOVERS_MS, 'events after');

    const onNew = clientOf(master);
    for (const app of [worker, producer]) {
      const stream = (app.get(RedisConnections).client as Redis).stream;
      expect(stream.remotePort).toBe(master.port);
    }
    // The idle worker blocks on its wake list and on the cancels stream, the producer's
    // subscription on the event stream: all on the new master.
    await waitUntil(
      async () => {
        const blocked = await blockedCommands(onNew);
        return (blocked.blpop ?? 0) >= 1 && (blocked.xread ?? 0) >= 2;
      },
      'the blocking reads on the new master',
      RECOVERS_MS,
    );
    // The producer's node lease is renewed on the new master. The worker enqueues nothing: its
    // lease is parked 10 s after boot (renewed every 5 minutes), so its renewals are not awaited.
    await leaseRenewedOn(onNew, producer);
  }, 90_000);

  it('a worker follows a master demoted to a replica (a failover ordered by hand) by itself', async () => {
    // The killed master of the test above comes back as a replica, then a failover is ordered
    // (SENTINEL FAILOVER): the old master stays up, and answers as a master until the sentinels
    // reconfigure it as a replica and drop its clients.
    const queue = uniqueQueue('sentinel-demoted');
    const ran = new DeferredMap<number>();
    const Proc = processorClass(queue, { leaseMs: 2_000 }, (job: Job) =>
      ran.get(job.id).resolve(job.attempt),
    );
    const worker = await boot([Proc]);
    const queues = worker.get(QueueService);
    if ((await group.replicas()).length === 0) await group.restartAsReplica(killed!.port);
    const before = await queues.enqueue(queue, 1);
    await withTimeout(ran.get(before).promise, 10_000, 'a job before');

    const { master } = await group.demoteMaster();
    // That takes the sentinels about 10 s on Redis 7.0 (their INFO period for a replica), and a
    // connection to the old master stays there until then, unless ioredis's failoverDetector
    // (not on by default) moves it at the sentinels' +switch-master.
    const command = worker.get(RedisConnections).client as Redis;
    await waitUntil(
      () => command.stream.remotePort === master.port,
      'the command connection to move',
      RECOVERS_MS,
    );

    const after = await withTimeout(queues.enqueue(queue, 2), RECOVERS_MS, 'an enqueue after the failover');
    await withTimeout(ran.get(after).promise, RECOVERS_MS, 'a job after the failover');
    expect((worker.get(RedisConnections).client as Redis).stream.remotePort).toBe(master.port);
  }, 90_000);
});
