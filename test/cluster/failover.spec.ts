import { createHash } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { QueueService, type Job } from '@app/echomq';
import { SCRIPTS } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { queuesOnDistinctMasters, type PlacedQueue } from '../support/cluster-queues';
import { clusterConnection, clusterPerSuite } from '../support/cluster-suite';
import type { ClusterMaster } from '../support/redis-cluster';
import { closeAll, processorClass, waitUntil } from '../worker/fixtures/support';

/**
 * A master of a 3+3 Redis Cluster SIGKILLed mid-run: its replica is promoted (cluster-node-timeout
 * 1,000 ms), and a worker application and a producer application on the cluster go on by
 * themselves, with no restart and nothing done for them by the test. New enqueues are
 * acknowledged and completed on the new master, whose script cache starts empty (the scripts
 * are loaded again after NOSCRIPT). Writes here are plain (not durable): what the old master
 * had not replicated is lost, which the fault battery's cluster-failover scenario counts.
 */
const RECOVERS_MS = 20_000;
/** The producer's and the worker's scripts, as EVALSHA names them. */
const SHAS = [SCRIPTS.emqEnqueue, SCRIPTS.emqClaim, SCRIPTS.emqComplete].map(({ lua }) =>
  createHash('sha1').update(lua).digest('hex'),
);

describe('a cluster master SIGKILLed mid-run', () => {
  const apps: INestApplication[] = [];
  let producing = true;
  const suite = clusterPerSuite(3, { replicas: 1 }, async () => {
    producing = false;
    await closeAll(apps.splice(0));
  });
  let placed: PlacedQueue;

  beforeAll(async () => {
    [placed] = await queuesOnDistinctMasters(suite.cluster, 1, 'failover');
  });

  async function boot(providers: Parameters<typeof bootApp>[0]): Promise<INestApplication> {
    const app = await bootApp(providers, {
      // With a short disconnectTimeout (see clusterConnection): the slot-map refreshes that
      // tried the killed node would otherwise hold jest 2 s past the run.
      connection: clusterConnection(suite.cluster),
      shutdownGraceMs: 300,
      ...(providers.length === 0 ? { startProcessors: false } : {}),
    });
    apps.push(app);
    return app;
  }

  it('is replaced by its replica, and the worker and the producer go on by themselves', async () => {
    const cluster = suite.cluster;
    await boot([
      processorClass(
        placed.queue,
        { concurrency: 20, leaseMs: 2_000 },
        (job: Job<{ n: number }>) => job.data.n,
      ),
    ]);
    const queues = (await boot([])).get(QueueService);

    // The producer: one enqueue every 10 ms, each job under its own idempotency key; a failed
    // enqueue is tried again with the same key, as an application would.
    const acked: { id: string; n: number; at: number }[] = [];
    const producer = (async () => {
      for (let n = 0; producing; n++) {
        for (;;) {
          try {
            const id = await queues.enqueue(placed.queue, { n }, { idempotencyKey: `job-${n}` });
            acked.push({ id, n, at: Date.now() });
            break;
          } catch {
            if (!producing) return;
          }
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    })();

    await waitUntil(() => acked.length >= 50, 'the first acknowledgements');
    expect(await queues.waitFor(placed.queue, acked[0].id, RECOVERS_MS)).toBe(0);
    const old: ClusterMaster = placed.master;
    const replica = await cluster.replicaOf(old.port);
    // The replica's script cache is empty: scripts are not replicated, so the new master must
    // answer NOSCRIPT and have them loaded again.
    expect(await cluster.admin(replica).script('EXISTS', ...SHAS)).toEqual([0, 0, 0]);

    await cluster.faults.kill(old.port);
    const promoted = await cluster.faults.waitForPromotion(old.port);
    const promotedAt = Date.now();
    expect(promoted.port).toBe(replica);

    // Acknowledged after the promotion, and completed: both applications follow the new master.
    await waitUntil(
      () => acked.filter((ack) => ack.at > promotedAt).length >= 20,
      'enqueues acknowledged by the new master',
      RECOVERS_MS,
    );
    const fresh = acked.filter((ack) => ack.at > promotedAt).slice(0, 20);
    const results = await Promise.all(fresh.map((ack) => queues.waitFor(placed.queue, ack.id, RECOVERS_MS)));
    expect(results).toEqual(fresh.map((ack) => ack.n));
    expect(await cluster.admin(promoted.port).script('EXISTS', ...SHAS)).toEqual([1, 1, 1]);

    producing = false;
    await producer;
    // No id was handed out for two jobs across the failover (the node lease held).
    expect(new Set(acked.map((ack) => ack.id)).size).toBe(acked.length);
  }, 60_000);
});
