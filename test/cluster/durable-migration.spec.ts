import type { INestApplication, Provider } from '@nestjs/common';
import { QueueService, type Job } from '@app/echomq';
import { queueKeys, RedisConnections } from '@app/echomq/internal';
import { replicaWaitFor } from '@app/echomq/durability/durable-context';
import { checkReplicatedUntil } from '@app/echomq/durability/durable-write';
import type { ReplicaWait } from '@app/echomq/durability/replica-confirmer';
import { monotonicMs } from '@app/echomq/monotonic';
import { bootApp } from '../support/nest';
import {
  blockedInWait,
  pauseReplicaOf,
  queuesOnDistinctMasters,
  replicaReader,
  type PlacedQueue,
} from '../support/cluster-queues';
import { clusterConnection, clusterPerSuite } from '../support/cluster-suite';
import type { RedisCluster } from '../support/redis-cluster';
import { closeAll, DeferredMap, processorClass, waitUntil, withTimeout } from '../worker/fixtures/support';

/**
 * Durable writes (module option `durable`) of a queue whose slot was migrated (as
 * `redis-cli --cluster reshard` moves it) onto a master that already confirms other queues'
 * writes. The confirmation must then run on that master, where the queue now is: its WAIT,
 * and its small write, on the connection the application keeps for that master. A
 * confirmation routed by a slot map of its own, older than the migration, is refused by the
 * old master on every try, so enqueues fail after their repeat window (30 s) and claims go
 * back unstarted, again and again.
 */
const WAIT = { replicas: 1, timeoutMs: 20_000 };
/** Far more than a confirmation on a healthy cluster takes; far less than the 30 s repeat window. */
const SETTLES_MS = 10_000;

const suite = clusterPerSuite(3, { replicas: 1 });

describe('durable writes of a queue whose slot moved onto a master that confirms other queues', () => {
  const apps: INestApplication[] = [];
  let a: PlacedQueue;
  let b: PlacedQueue;
  let paused: number | undefined;

  beforeEach(async () => {
    // Fresh queues on two masters for each test: a's slot is moved onto b's master.
    [a, b] = await queuesOnDistinctMasters(suite.cluster, 2, 'moved');
  });

  afterEach(async () => {
    if (paused !== undefined) suite.cluster.faults.resume(paused);
    paused = undefined;
    await closeAll(apps.splice(0));
  });

  async function boot(providers: Provider[], durable: typeof WAIT | undefined, nodeId: number) {
    const app = await bootApp(providers, {
      connection: clusterConnection(suite.cluster),
      shutdownGraceMs: 300,
      nodeId,
      ...(durable ? { durable } : {}),
    });
    apps.push(app);
    return app;
  }

  /** Moves a's slot onto b's master; returns a as it is placed now. */
  async function moveAOntoB(): Promise<PlacedQueue> {
    await suite.cluster.migrateSlot(a.slot, b.master.port);
    return { ...a, master: b.master };
  }

  async function onReplica(placed: PlacedQueue, id: string): Promise<boolean> {
    const reader = await replicaReader(suite.cluster, placed.master.port);
    return (await reader.exists(`${queueKeys(placed.queue).jobPrefix}${id}`)) === 1;
  }

  it('confirms an enqueue of the moved queue by the replica of its new master', async () => {
    const queues = (await boot([], WAIT, 11)).get(QueueService);
    // Confirmations on both masters before the move: each has its confirmation connection.
    await queues.enqueue(a.queue, { before: 'a' });
    await queues.enqueue(b.queue, { before: 'b' });
    const moved = await moveAOntoB();

    const first = await withTimeout(
      queues.enqueue(moved.queue, { n: 1 }),
      SETTLES_MS,
      'a durable enqueue of the moved queue',
    );
    expect(await onReplica(moved, first)).toBe(true);

    // It waits for the new master's replica, and for no other.
    paused = await pauseReplicaOf(suite.cluster, moved);
    let settled = false;
    const second = queues.enqueue(moved.queue, { n: 2 }).finally(() => (settled = true));
    await waitUntil(
      async () => (await blockedInWait(suite.cluster, moved.master.port)) > 0,
      "a WAIT on the moved queue's new master",
    );
    expect(settled).toBe(false);
    suite.cluster.faults.resume(paused);
    paused = undefined;
    const id = await withTimeout(second, SETTLES_MS, 'the enqueue once the replica is back');
    expect(await onReplica(moved, id)).toBe(true);
  });

  it('starts a job of the moved queue on its first claim, confirmed on its new master', async () => {
    const started = new DeferredMap<{ attempt: number; onReplica: string | null }>();
    // Where a's queue is when its handler runs: its own master, then b's after the move.
    let aMasterPort = a.master.port;
    const processors = [a, b].map((placed) =>
      processorClass(placed.queue, { concurrency: 2 }, async (job: Job) => {
        const reader = await replicaReader(suite.cluster, placed === a ? aMasterPort : b.master.port);
        const attempts = await reader.hget(`${queueKeys(placed.queue).jobPrefix}${job.id}`, 'a');
        started.get(job.id).resolve({ attempt: job.attempt, onReplica: attempts });
      }),
    );
    await boot(processors, WAIT, 12);
    // Jobs go in with plain writes: only the claims are durable here.
    const producer = (await boot([], undefined, 13)).get(QueueService);
    // A claim confirmed on each master before the move.
    for (const placed of [a, b]) {
      const id = await producer.enqueue(placed.queue, { before: placed.queue });
      await withTimeout(started.get(id).promise, SETTLES_MS, `the first job of ${placed.queue}`);
    }
    const moved = await moveAOntoB();
    aMasterPort = moved.master.port;

    const id = await producer.enqueue(moved.queue, { n: 1 });
    // Attempt 1: its first claim was confirmed, not given back unstarted and claimed again.
    expect(await withTimeout(started.get(id).promise, SETTLES_MS, 'the job of the moved queue')).toEqual({
      attempt: 1,
      onReplica: '1',
    });
  });
});

/** How many commands the node on `port` refused with ASK so far (INFO errorstats). */
async function askReplies(cluster: RedisCluster, port: number): Promise<number> {
  const stats = String(await cluster.admin(port).info('errorstats'));
  return Number(/errorstat_ASK:count=(\d+)/.exec(stats)?.[1] ?? 0);
}

/**
 * The confirmer alone, on connections with no other traffic (no application, no reaper), so its
 * command client learns of a move only from what the confirmer does: a confirmation that meets
 * the move itself, between a write and its confirmation.
 */
describe('a durable confirmation of a slot on its way to another master', () => {
  let connections: RedisConnections | undefined;
  let wait: ReplicaWait;
  let a: PlacedQueue;
  let b: PlacedQueue;

  beforeEach(async () => {
    [a, b] = await queuesOnDistinctMasters(suite.cluster, 2, 'record');
    connections = new RedisConnections({ connection: clusterConnection(suite.cluster) });
    wait = replicaWaitFor(connections, { replicas: 1, timeoutMs: 5_000 })!;
  });

  afterEach(async () => {
    await connections?.onApplicationShutdown();
    connections = undefined;
  });

  /** A reply record of each queue, written through the command client, and confirmed once on each master. */
  async function recordsConfirmed(): Promise<[string, string]> {
    const records: [string, string] = [queueKeys(a.queue).reply('r-a'), queueKeys(b.queue).reply('r-b')];
    for (const record of records) {
      await connections!.client.set(record, '1', 'PX', 60_000);
      expect(await checkReplicatedUntil(wait, record, 60_000, monotonicMs() + 5_000)).toEqual({
        state: 'present',
        acknowledged: 1,
      });
    }
    return records;
  }

  it('is asked again on the new master when the slot moved after its write', async () => {
    const [record] = await recordsConfirmed();
    // Moved behind the command client's back: its slot map still names the old master.
    await suite.cluster.migrateSlot(a.slot, b.master.port);

    const check = await checkReplicatedUntil(wait, record, 60_000, monotonicMs() + SETTLES_MS);

    expect(check).toEqual({ state: 'present', acknowledged: 1 });
  });

  it('waits for the end of a migration that moved its record, then is confirmed on the new master', async () => {
    const [record] = await recordsConfirmed();
    const migration = await suite.cluster.beginMigration(a.slot, b.master.port);
    // The record alone is moved: the old master now answers ASK for it.
    const asked = await askReplies(suite.cluster, a.master.port);
    await suite.cluster
      .admin(a.master.port)
      .migrate(b.master.host, b.master.port, '', 0, 5_000, 'KEYS', record);

    let settled = false;
    const check = checkReplicatedUntil(wait, record, 60_000, monotonicMs() + 20_000).finally(
      () => (settled = true),
    );
    await waitUntil(
      async () => (await askReplies(suite.cluster, a.master.port)) > asked,
      'the confirmation refused with ASK by the old master',
    );
    expect(settled).toBe(false);

    await migration.drain();
    await migration.finish();
    expect(await withTimeout(check, SETTLES_MS, 'the confirmation after the migration')).toEqual({
      state: 'present',
      acknowledged: 1,
    });
  });
});
