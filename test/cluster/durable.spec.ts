import type { INestApplication, Provider } from '@nestjs/common';
import { NotReplicatedError, QueueService, type Job } from '@app/echomq';
import { nodeLeaseKey, queueKeys } from '@app/echomq/internal';
import { JOB_ID_MINTER, type JobIdMinter } from '@app/echomq/module/tokens';
import { bootApp } from '../support/nest';
import {
  blockedInWait,
  pauseReplicaOf,
  queuesOnDistinctMasters,
  replicaReader,
  type PlacedQueue,
} from '../support/cluster-queues';
import { clusterConnection, clusterPerSuite } from '../support/cluster-suite';
import { closeAll, deferred, DeferredMap, processorClass, waitUntil } from '../worker/fixtures/support';

/**
 * Durable writes (module option `durable`) on Redis Cluster: WAIT counts the replicas of the node
 * that runs it, so each confirmation must run on the master serving the confirmed key's slot.
 * Queues on two masters are written at once, and every job (and every claim) is read back on its
 * own master's replica (READONLY). A silent replica on one master holds back only that master's
 * queue: a confirmation sent elsewhere, or merged with another master's, would either resolve
 * while the replica is stopped or fail outright.
 */
const WAIT = { replicas: 1, timeoutMs: 20_000 };

describe('durable writes on a cluster of 3 masters with a replica each', () => {
  const suite = clusterPerSuite(3, { replicas: 1 });
  const cluster = () => suite.cluster;
  let a: PlacedQueue;
  let b: PlacedQueue;
  const apps: INestApplication[] = [];
  let paused: number | undefined;

  beforeEach(async () => {
    // Fresh queues for each test, so no job of an earlier test is claimed first.
    [a, b] = await queuesOnDistinctMasters(cluster(), 2, 'durable');
  });

  afterEach(async () => {
    if (paused !== undefined) cluster().faults.resume(paused);
    paused = undefined;
    await closeAll(apps.splice(0));
  });

  async function boot(providers: Provider[], durable: typeof WAIT | undefined, nodeId?: number) {
    const app = await bootApp(providers, {
      connection: clusterConnection(cluster()),
      shutdownGraceMs: 300,
      ...(durable ? { durable } : {}),
      ...(nodeId === undefined ? {} : { nodeId }),
    });
    apps.push(app);
    return app;
  }

  async function onReplica(placed: PlacedQueue, id: string): Promise<boolean> {
    const reader = await replicaReader(cluster(), placed.master.port);
    return (await reader.exists(`${queueKeys(placed.queue).jobPrefix}${id}`)) === 1;
  }

  it('confirms concurrent enqueues of two masters each by its own master’s replica, a silent one holding back only its own', async () => {
    const app = await boot([], WAIT);
    const queues = app.get(QueueService);
    // The node lease's tenure is confirmed (the first id minted) before any replica stops.
    await queues.enqueue(b.queue, { warm: true });
    paused = await pauseReplicaOf(cluster(), a);

    // 20 single enqueues and one enqueueMany of 10 per queue, all at once: merged into shared
    // confirmations per master, never across masters.
    const burst = async (placed: PlacedQueue): Promise<string[]> => {
      const singles = Array.from({ length: 20 }, (_, n) => queues.enqueue(placed.queue, { n }));
      const many = queues.enqueueMany(
        placed.queue,
        Array.from({ length: 10 }, (_, n) => ({ data: { n: 100 + n } })),
      );
      return [...(await Promise.all(singles)), ...(await many)];
    };
    let settledA = false;
    const callsA = burst(a).finally(() => (settledA = true));
    callsA.catch(() => undefined);
    const idsB = await burst(b);

    expect(idsB).toHaveLength(30);
    expect((await Promise.all(idsB.map((id) => onReplica(b, id)))).every(Boolean)).toBe(true);
    await waitUntil(
      async () => (await blockedInWait(cluster(), a.master.port)) > 0,
      'a WAIT on the first master',
    );
    expect(settledA).toBe(false);
    // Written on their master, waiting for that master's replica.
    expect(await cluster().admin(a.master.port).zcard(queueKeys(a.queue).pending)).toBe(30);

    cluster().faults.resume(paused);
    paused = undefined;
    const idsA = await callsA;
    expect(idsA).toHaveLength(30);
    expect((await Promise.all(idsA.map((id) => onReplica(a, id)))).every(Boolean)).toBe(true);
    // A smoke check only (loopback replication gets any write there within a millisecond):
    // the leased node's key is on its own master's replica.
    const node = app.get<JobIdMinter>(JOB_ID_MINTER).node!;
    const leaseKey = nodeLeaseKey(node);
    const leaseMaster = await cluster().ownerOf(await cluster().slotOf(leaseKey));
    expect(await (await replicaReader(cluster(), leaseMaster.port)).exists(leaseKey)).toBe(1);
  });

  it('starts each handler only once its claim is on its own master’s replica, the silent one holding back only its queue', async () => {
    type Run = { id: string; attempt: number; onReplica: string | null };
    const runs = new Map<string, Run[]>([
      [a.queue, []],
      [b.queue, []],
    ]);
    const started = new DeferredMap<Run>();
    // The first job of the second queue keeps running until the end, so the process is never
    // idle: its claims are then made side by side, none of them exclusive (see IsolationGate).
    const holding = deferred();
    const processors = [a, b].map((placed) =>
      processorClass(placed.queue, { leaseMs: 60_000, concurrency: 5 }, async (job: Job) => {
        const reader = await replicaReader(cluster(), placed.master.port);
        const attempts = await reader.hget(`${queueKeys(placed.queue).jobPrefix}${job.id}`, 'a');
        const run = { id: job.id, attempt: job.attempt, onReplica: attempts };
        runs.get(placed.queue)!.push(run);
        started.get(job.id).resolve(run);
        if (placed === b && runs.get(b.queue)!.length === 1) await holding.promise;
      }),
    );
    const worker = await boot(processors, WAIT);
    // Its node lease confirmed first: a lease key on the stopped replica's master would wait too.
    await worker.get<JobIdMinter>(JOB_ID_MINTER).ready(10_000);
    // Jobs go in with plain writes, so they can be enqueued while a replica is stopped.
    const producer = (await boot([], undefined, 9)).get(QueueService);
    try {
      const firstB = await producer.enqueue(b.queue, { n: 1 });
      expect(await started.get(firstB).promise).toEqual({ id: firstB, attempt: 1, onReplica: '1' });
      paused = await pauseReplicaOf(cluster(), a);

      const idA = await producer.enqueue(a.queue, { n: 2 });
      // Claimed on its master, waiting for that master's replica before it starts.
      await waitUntil(
        async () => (await cluster().admin(a.master.port).zscore(queueKeys(a.queue).active, idA)) !== null,
        'the claim on the first master',
      );
      await waitUntil(
        async () => (await blockedInWait(cluster(), a.master.port)) > 0,
        'a WAIT on the first master',
      );
      // Meanwhile the other master's claims are confirmed and run.
      const secondB = await producer.enqueue(b.queue, { n: 3 });
      expect(await started.get(secondB).promise).toEqual({ id: secondB, attempt: 1, onReplica: '1' });
      expect(runs.get(a.queue)).toEqual([]);

      cluster().faults.resume(paused);
      paused = undefined;
      expect(await started.get(idA).promise).toEqual({ id: idA, attempt: 1, onReplica: '1' });
    } finally {
      holding.resolve();
    }
  });
});

describe('durable writes on a cluster whose masters have no replica', () => {
  let app: INestApplication | undefined;
  const suite = clusterPerSuite(3, {}, async () => app?.close());

  it('rejects an enqueue with NotReplicatedError naming its job, which is on the master', async () => {
    const cluster = suite.cluster;
    const [placed] = await queuesOnDistinctMasters(cluster, 1, 'no-replica');
    // A configured node: a leased one would wait for a replica to confirm its tenure first.
    app = await bootApp([], {
      connection: clusterConnection(cluster),
      durable: { replicas: 1, timeoutMs: 200 },
      nodeId: 5,
    });

    const error = (await app
      .get(QueueService)
      .enqueue(placed.queue, { n: 1 })
      .catch((reason: unknown) => reason)) as NotReplicatedError;

    expect(error).toBeInstanceOf(NotReplicatedError);
    expect(error).toMatchObject({ code: 'NOT_REPLICATED', acknowledged: 0, required: 1, timeoutMs: 200 });
    expect(error.message).toMatch(/^Only 0 of 1 replicas acknowledged the write within 200 ms/);
    expect(error.ids).toHaveLength(1);
    const row = `${queueKeys(placed.queue).jobPrefix}${error.ids[0]}`;
    expect(await cluster.admin(placed.master.port).exists(row)).toBe(1);
  });
});
