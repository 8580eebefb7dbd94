import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { QueueService } from '@app/echomq';
import { claimJobs, partitionQueueName, partitionTagOf, RedisConnections } from '@app/echomq/internal';
import { EchoMqMetrics, QUEUES_READ_AT_ONCE } from '@app/echomq/metrics';
import { registerHandlerMetrics } from '@app/echomq/metrics/handler-metrics';
import { packReadGroups } from '@app/echomq/metrics/read-groups';
import { RedisSnapshots, type QueueReads } from '@app/echomq/metrics/redis-snapshot';
import { RuntimeMetrics } from '@app/echomq/metrics/runtime-metrics';
import type { ClaimLoopReport } from '@app/echomq/worker/loop-report';
import { openMonitor } from '../support/monitor';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { parseExposition, samplesOf, valueOf } from '../metrics/support/exposition';

/** A producer on a key prefix of its own, declaring `partitioned` with their partition counts. */
function bootProducer(prefix: string, partitioned: Record<string, number>): Promise<INestApplication> {
  const queues = Object.fromEntries(
    Object.entries(partitioned).map(([queue, partitions]) => [queue, { partitions }]),
  );
  return bootApp([], { keyPrefix: prefix, queues });
}

/** Enqueues one job in each of eight lanes (in one call, split by partition) and returns the lanes. */
async function lanesOverPartitions(queues: QueueService, queue: string): Promise<string[]> {
  const lanes = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
  await queues.enqueueMany(
    queue,
    lanes.map((lane) => ({ data: lane, lane })),
  );
  return lanes;
}

describe('metrics of a partitioned queue: one queue, its partitions summed', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('reports depths, lanes, pause and counters under the queue name, summed over its partitions', async () => {
    const prefix = `pmt-${randomBytes(4).toString('hex')}`;
    const queue = uniqueQueue('clicks');
    const app = await bootProducer(prefix, { [queue]: 3 });
    try {
      const queues = app.get(QueueService);
      const lanes = await lanesOverPartitions(queues, queue);
      // Three calls of unpinned jobs take the partitions in turn; one of them is delayed.
      await queues.enqueue(queue, { n: 1 });
      await queues.enqueue(queue, { n: 2 });
      await queues.enqueue(queue, { n: 3 }, { delayMs: 600_000 });
      const pendingByPartition = await Promise.all(
        [0, 1, 2].map((k) => queues.counts(partitionQueueName(queue, k))),
      );
      // The jobs really are spread: a sum that read one partition would come out short.
      expect(pendingByPartition.filter((c) => c.pending > 0).length).toBeGreaterThanOrEqual(2);
      const busy = pendingByPartition.findIndex((c) => c.pending > 0);
      const [claimed] = (
        await claimJobs(queues.context(partitionQueueName(queue, busy)), {
          count: 1,
          leaseMs: 600_000,
          claimantPrefix: 'pmt-1',
        })
      ).jobs;
      expect(claimed).toBeDefined();

      const scrape = parseExposition(await app.get(EchoMqMetrics).text());
      const counts = await queues.counts(queue);
      expect(counts).toEqual({ pending: lanes.length + 1, active: 1, schedule: 1, dead: 0 });
      for (const set of ['pending', 'active', 'schedule', 'dead'] as const) {
        expect(valueOf(scrape, 'echomq_queue_jobs', { queue, set })).toBe(counts[set]);
      }
      // No series names a partition: the queue is one queue.
      const named = new Set(samplesOf(scrape, 'echomq_queue_jobs').map((s) => s.labels.queue));
      expect([...named]).toEqual([queue]);
      expect(valueOf(scrape, 'echomq_queue_lanes', { queue })).toBe(lanes.length + 1);
      for (const lane of lanes) {
        const active = lane === claimed.lane ? 1 : 0;
        expect(valueOf(scrape, 'echomq_lane_jobs', { queue, lane, set: 'pending' })).toBe(1 - active);
        expect(valueOf(scrape, 'echomq_lane_jobs', { queue, lane, set: 'active' })).toBe(active);
      }
      expect(valueOf(scrape, 'echomq_transitions_total', { queue, transition: 'enqueued' })).toBe(
        lanes.length + 3,
      );
      expect(valueOf(scrape, 'echomq_queue_paused', { queue })).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('reports the queue paused only while every partition is', async () => {
    const prefix = `pps-${randomBytes(4).toString('hex')}`;
    const queue = uniqueQueue('paused');
    const app = await bootProducer(prefix, { [queue]: 2 });
    try {
      const queues = app.get(QueueService);
      await queues.enqueue(queue, { n: 1 });
      // One partition paused by its own name: the queue still runs in the other.
      await queues.pause(partitionQueueName(queue, 0));
      const one = parseExposition(await app.get(EchoMqMetrics).text());
      expect(valueOf(one, 'echomq_queue_paused', { queue })).toBe(0);

      await queues.pause(queue);
      const snapshots = new RedisSnapshots(queues, app.get(RedisConnections).reachability, quietLogger(), 0);
      const all = await snapshots.get();
      expect(all.queues.find((q) => q.queue === queue)?.paused).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('costs four commands per physical queue of a partitioned queue, and one SMEMBERS', async () => {
    const prefix = `pcs-${randomBytes(4).toString('hex')}`;
    const queue = uniqueQueue('cost');
    const app = await bootProducer(prefix, { [queue]: 3 });
    const monitor = await openMonitor();
    try {
      const queues = app.get(QueueService);
      for (let n = 0; n < 3; n++) await queues.enqueue(queue, { n });
      // Loads the read scripts, so the scrape's calls are one EVALSHA each.
      await queues.counts(queue);
      await queues.lanes(queue);
      const seen: string[][] = [];
      const [start, end] = [`start-${prefix}`, `end-${prefix}`];
      let counting = false;
      const ended = new Promise<void>((resolve) => {
        monitor.on('monitor', (_time: string, args: string[], source: string) => {
          const echoed = args[0]?.toLowerCase() === 'echo' ? args[1] : undefined;
          if (echoed === start) counting = true;
          if (echoed === end) resolve();
          if (counting && echoed === undefined && source !== 'lua') seen.push(args);
        });
      });
      await redis.echo(start);
      const scrape = parseExposition(await app.get(EchoMqMetrics).text());
      await redis.echo(end);
      await ended;

      expect(valueOf(scrape, 'echomq_queue_jobs', { queue, set: 'pending' })).toBe(3);
      const named = (text: string) => seen.filter((args) => args.some((arg) => arg.includes(text)));
      expect(named(`${prefix}:queues`).map((args) => args[0].toLowerCase())).toEqual(['smembers']);
      // The queue itself is read too: jobs from before it was partitioned would be there.
      for (const physical of [queue, ...[0, 1, 2].map((k) => partitionQueueName(queue, k))]) {
        const commands = named(`${prefix}:{${physical}}`).map((args) => args[0].toLowerCase());
        expect(commands.sort()).toEqual(['evalsha', 'evalsha', 'exists', 'hgetall']);
      }
    } finally {
      monitor.disconnect();
      await app.close();
    }
  });

  it(`never reads more than ${QUEUES_READ_AT_ONCE} physical queues at once, and a big partitioned queue whole and alone`, async () => {
    const prefix = `pgr-${randomBytes(4).toString('hex')}`;
    const big = uniqueQueue('big');
    const app = await bootProducer(prefix, { [big]: 16 });
    try {
      const queues = app.get(QueueService);
      const small = Array.from({ length: 20 }, () => uniqueQueue('small'));
      for (const queue of small) await queues.enqueue(queue, { n: 1 });
      for (let n = 0; n < 16; n++) await queues.enqueue(big, { n });
      // The real reads, watched: how many physical queues are being read at each moment.
      const inFlight = new Map<string, number>();
      let most = 0;
      let bigBeside = 0;
      const watched: QueueReads = {
        listQueues: () => queues.listQueues(),
        partitionLayout: (queue) => queues.partitionLayout(queue),
        lanes: (queue) => queues.lanes(queue),
        isPaused: (queue) => queues.isPaused(queue),
        metrics: (queue) => queues.metrics(queue),
        counts: async (queue) => {
          inFlight.set(queue, (await queues.partitionLayout(queue)).physical.length);
          most = Math.max(
            most,
            [...inFlight.values()].reduce((a, b) => a + b, 0),
          );
          if (inFlight.has(big) && inFlight.size > 1) bigBeside += 1;
          try {
            return await queues.counts(queue);
          } finally {
            inFlight.delete(queue);
          }
        },
      };
      const snapshot = await new RedisSnapshots(
        watched,
        app.get(RedisConnections).reachability,
        quietLogger(),
        0,
      ).get();
      expect(snapshot.complete).toBe(true);
      expect(snapshot.queues.map((q) => q.queue).sort()).toEqual([big, ...small].sort());
      expect(snapshot.queues.find((q) => q.queue === big)?.counts.pending).toBe(16);
      expect(bigBeside).toBe(0);
      // The big one alone is 17 (16 partitions and itself); the small ones go 16 to a group.
      expect(most).toBe(17);
      expect(small.length).toBeGreaterThan(QUEUES_READ_AT_ONCE);
    } finally {
      await app.close();
    }
  });
});

describe('read groups of a snapshot', () => {
  it('packs queues in order up to the bound, weighing each by its physical queues', () => {
    const groups = packReadGroups(
      [
        { queue: 'a', physical: 1 },
        { queue: 'b', physical: 4 },
        { queue: 'c', physical: 4 },
        { queue: 'd', physical: 17 },
        { queue: 'e', physical: 1 },
        { queue: 'f', physical: 0 },
      ],
      8,
    );
    expect(groups).toEqual([['a', 'b'], ['c'], ['d'], ['e', 'f']]);
  });

  it('never splits a queue and never leaves a group empty', () => {
    for (let seed = 1; seed <= 50; seed++) {
      const queues = Array.from({ length: 40 }, (_, n) => ({
        queue: `q${n}`,
        physical: 1 + ((seed * 7 + n * 13) % 18),
      }));
      const groups = packReadGroups(queues, QUEUES_READ_AT_ONCE);
      expect(groups.flat()).toEqual(queues.map((q) => q.queue));
      const weight = new Map(queues.map((q) => [q.queue, q.physical]));
      for (const group of groups) {
        expect(group.length).toBeGreaterThan(0);
        const total = group.reduce((sum, queue) => sum + (weight.get(queue) ?? 0), 0);
        if (group.length > 1) expect(total).toBeLessThanOrEqual(QUEUES_READ_AT_ONCE);
      }
    }
  });
});

describe("a worker's own metrics of a partitioned queue", () => {
  it('counts claims, settlements and reaps of its partitions under the queue name', async () => {
    const registry = new Registry();
    const metrics = new RuntimeMetrics(registry);
    const queue = uniqueQueue('runtime');
    metrics.claimed(partitionQueueName(queue, 0), [], 2);
    metrics.claimed(partitionQueueName(queue, 2), [], 3);
    metrics.reaped(partitionQueueName(queue, 1), 2, 1);
    metrics.reaped(queue, 1, 0);
    const scrape = parseExposition(await registry.metrics());
    expect(valueOf(scrape, 'echomq_claim_duration_seconds_count', { queue })).toBe(2);
    expect(valueOf(scrape, 'echomq_reaped_leases_total', { queue, to: 'pending' })).toBe(3);
    expect(valueOf(scrape, 'echomq_reaped_leases_total', { queue, to: 'dead' })).toBe(1);
    expect(scrape.samples.some((s) => s.labels.queue?.includes('#'))).toBe(false);
  });

  it("adds up the running handlers of a queue's partition loops and keeps the oldest", async () => {
    const registry = new Registry();
    const queue = uniqueQueue('handlers');
    const other = uniqueQueue('handlers');
    const report = (name: string, running: number, oldestMs: number | null): ClaimLoopReport => ({
      queue: name,
      state: 'claiming',
      expected: true,
      handlers: { running, oldestMs },
    });
    registerHandlerMetrics(registry, () => [
      report(partitionQueueName(queue, 0), 2, 1_500),
      report(partitionQueueName(queue, 1), 3, 4_000),
      report(queue, 0, null),
      report(other, 1, 250),
    ]);
    const scrape = parseExposition(await registry.metrics());
    expect(valueOf(scrape, 'echomq_handlers_running', { queue })).toBe(5);
    expect(valueOf(scrape, 'echomq_oldest_handler_seconds', { queue })).toBe(4);
    expect(valueOf(scrape, 'echomq_handlers_running', { queue: other })).toBe(1);
    expect(valueOf(scrape, 'echomq_oldest_handler_seconds', { queue: other })).toBe(0.25);
  });
});

/** The ids a spread enqueue minted carry their partitions (what the sums above stand on). */
describe('the spread the sums stand on', () => {
  it("routes the lanes of the first test to several partitions, each id tagged with its partition's index", async () => {
    const prefix = `ptg-${randomBytes(4).toString('hex')}`;
    const queue = uniqueQueue('tags');
    const app = await bootProducer(prefix, { [queue]: 3 });
    try {
      const queues = app.get(QueueService);
      await lanesOverPartitions(queues, queue);
      const tags = new Set<number | undefined>();
      for (const k of [0, 1, 2]) {
        for (const id of await queues.browse(partitionQueueName(queue, k), 'pending')) {
          expect(partitionTagOf(id)).toBe(k);
          tags.add(k);
        }
      }
      expect(tags.size).toBeGreaterThanOrEqual(2);
    } finally {
      await app.close();
    }
  });
});

function quietLogger() {
  return { warn: () => undefined, log: () => undefined };
}
