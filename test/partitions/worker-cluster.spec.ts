import type { INestApplication } from '@nestjs/common';
import {
  ProcessorExplorer,
  QueueService,
  RateLimitedError,
  queueKeys,
  type Job,
  type WorkerEvents,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { RedisCluster } from '../support/redis-cluster';
import { closeAll, deferred, processorClass } from '../worker/fixtures/support';
import { completionsAcross, enqueueNumbered } from './support/completions';

/**
 * 'clicks' is a name whose three partitions hash to slots of three different masters of a
 * three-master cluster, so each worker claims from three shards at once, one loop per shard.
 */
const QUEUE = 'clicks';

describe('workers of a partitioned queue on a real 3-master Redis Cluster', () => {
  let cluster: RedisCluster;
  const apps: INestApplication[] = [];
  const runs = new Map<string, number>();
  const partitions = new Set<number | undefined>();
  const names = new Set<string>();
  // The first 8 handlers wait until 8 run at once: with concurrency 4 each, both workers serve.
  const together = deferred();
  let runningNow = 0;

  const handler = async (job: Job<{ n: number }>) => {
    // A negative n: the service the handler calls answers "too many" to its first attempt.
    if (job.data.n < 0 && job.attempt === 1) throw new RateLimitedError(1_000);
    runs.set(job.id, (runs.get(job.id) ?? 0) + 1);
    partitions.add(job.partition);
    names.add(job.queue);
    runningNow += 1;
    if (runningNow === 8) together.resolve();
    if (runs.size <= 8) await together.promise;
    runningNow -= 1;
    return job.data.n;
  };

  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
    const options = {
      connection: { cluster: { nodes: cluster.nodes } },
      shutdownGraceMs: 200,
      queues: { [QUEUE]: { partitions: 3, concurrency: 4 } },
    };
    for (let worker = 0; worker < 2; worker++)
      apps.push(await bootApp([processorClass(QUEUE, {}, handler)], options));
  }, 60_000);
  afterAll(async () => {
    await closeAll(apps.splice(0));
    await cluster?.destroy();
  });

  it('serves each partition with its own loop, on three different masters', async () => {
    const slots = await Promise.all([0, 1, 2].map((k) => cluster.slotOf(queueKeys(`${QUEUE}#${k}`).wake)));
    const masters = await Promise.all(slots.map((slot) => cluster.ownerOf(slot)));
    expect(new Set(masters.map((master) => master.id)).size).toBe(3);
    for (const app of apps) {
      expect(
        app
          .get(ProcessorExplorer)
          .loopReports()
          .map((report) => [report.queue, report.state]),
      ).toEqual([
        [`${QUEUE}#0`, 'claiming'],
        [`${QUEUE}#1`, 'claiming'],
        [`${QUEUE}#2`, 'claiming'],
      ]);
    }
  });

  it('runs every job exactly once across the two workers, from every shard', async () => {
    const completed = completionsAcross(apps, QUEUE, 60);
    const queues = apps[0].get(QueueService);
    const ids = await enqueueNumbered(queues, QUEUE, 60);
    await completed;

    expect(runs.size).toBe(60);
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(new Set(runs.keys())).toEqual(new Set(ids));
    expect(partitions).toEqual(new Set([0, 1, 2]));
    expect(names).toEqual(new Set([QUEUE]));
    expect(await queues.counts(QUEUE)).toMatchObject({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });

  it("holds every partition, on every master, until the same instant after a RateLimitedError of scope 'queue'", async () => {
    const throttled = new Promise<WorkerEvents['throttled']>((resolve) => {
      for (const app of apps) {
        app
          .get(ProcessorExplorer)
          .requireLoop(QUEUE)
          .events.once('throttled', (...event) => resolve(event));
      }
    });
    const queues = apps[0].get(QueueService);
    const id = await queues.enqueue(QUEUE, { n: -1 });
    const [throttledId, , scope, job] = await throttled;
    expect([throttledId, scope]).toEqual([id, 'queue']);
    /** When the hold of one physical queue ends (ms), as the master of its slot has it. */
    const holdEnd = async (physical: string): Promise<number> => {
      const key = queueKeys(physical).hold;
      const master = await cluster.ownerOf(await cluster.slotOf(key));
      return Number(await cluster.admin(master.port).call('PEXPIRETIME', key));
    };
    const until = await holdEnd(`${QUEUE}#${job.partition!}`);
    expect(until).toBeGreaterThan(0);
    for (const physical of [QUEUE, `${QUEUE}#0`, `${QUEUE}#1`, `${QUEUE}#2`]) {
      // Read back as PTTL + TIME on the job's master: exact to the millisecond between the two.
      expect([physical, Math.abs((await holdEnd(physical)) - until) <= 1]).toEqual([physical, true]);
    }
    await expect(queues.waitFor(QUEUE, id, 10_000)).resolves.toBe(-1);
  });
});
