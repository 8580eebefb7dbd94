import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService } from '@app/echomq';
import { claimJobs } from '@app/echomq/internal';
import { EchoMqMetrics, LANES_REPORTED_MAX } from '@app/echomq/metrics';
import { openMonitor } from '../support/monitor';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { eventually } from './support/eventually';
import { parseExposition, samplesOf, valueOf } from './support/exposition';

/** A producer-only application under a key prefix of its own, so a snapshot reads only this file's queues. */
async function bootProducer(prefix: string): Promise<INestApplication> {
  return bootApp([], { keyPrefix: prefix });
}

describe('metrics read from Redis: depths per set and lane, and what one scrape costs', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });

  afterAll(async () => {
    await redis.quit();
  });

  it('reports each set and each lane as deep as Redis holds it', async () => {
    const app = await bootProducer(`dep-${randomBytes(4).toString('hex')}`);
    try {
      const queues = app.get(QueueService);
      const metrics = app.get(EchoMqMetrics);
      const queue = uniqueQueue('depths');
      const jobs = [
        ...['a', 'a', 'a', 'b', 'b'].map((lane) => ({ data: lane, lane })),
        { data: 'default lane' },
        { data: 'later', delayMs: 600_000 },
        { data: 'later too', lane: 'a', delayMs: 600_000 },
      ];
      await queues.enqueueMany(queue, jobs);
      // One job claimed by hand: active, in whichever lane the claim's fair schedule picked.
      const [claimed] = (
        await claimJobs(queues.context(queue), { count: 1, leaseMs: 600_000, claimantPrefix: 'depths-1' })
      ).jobs;
      const pending = { a: 3, b: 2, default: 1 } as Record<string, number>;
      pending[claimed.lane] -= 1;

      const scrape = parseExposition(await metrics.text());
      expect(valueOf(scrape, 'echomq_queue_jobs', { queue, set: 'pending' })).toBe(5);
      expect(valueOf(scrape, 'echomq_queue_jobs', { queue, set: 'active' })).toBe(1);
      expect(valueOf(scrape, 'echomq_queue_jobs', { queue, set: 'schedule' })).toBe(2);
      expect(valueOf(scrape, 'echomq_queue_jobs', { queue, set: 'dead' })).toBe(0);
      for (const lane of ['a', 'b', 'default']) {
        expect(valueOf(scrape, 'echomq_lane_jobs', { queue, lane, set: 'pending' })).toBe(pending[lane]);
        expect(valueOf(scrape, 'echomq_lane_jobs', { queue, lane, set: 'active' })).toBe(
          lane === claimed.lane ? 1 : 0,
        );
      }
      expect(valueOf(scrape, 'echomq_queue_lanes', { queue })).toBe(3);
      expect(valueOf(scrape, 'echomq_queue_paused', { queue })).toBe(0);
      // The same numbers as the sets themselves (ZCARD), read beside the scrape.
      const keys = queues.context(queue).keys;
      expect(await redis.zcard(keys.schedule)).toBe(2);
      expect(await redis.zcard(keys.active)).toBe(1);
    } finally {
      await app.close();
    }
  });

  it(`reports the ${LANES_REPORTED_MAX} deepest lanes of a queue and counts them all`, async () => {
    const app = await bootProducer(`lan-${randomBytes(4).toString('hex')}`);
    try {
      const queues = app.get(QueueService);
      const queue = uniqueQueue('many-lanes');
      const lanes = Array.from({ length: LANES_REPORTED_MAX + 20 }, (_, n) => `tenant-${n}`);
      // The first lane holds three jobs, every other one: the first must be among those reported.
      await queues.enqueueMany(queue, [
        ...lanes.map((lane) => ({ data: lane, lane })),
        { data: 'deep', lane: lanes[0] },
        { data: 'deeper', lane: lanes[0] },
      ]);
      const scrape = parseExposition(await app.get(EchoMqMetrics).text());
      expect(valueOf(scrape, 'echomq_queue_lanes', { queue })).toBe(lanes.length);
      const reported = samplesOf(scrape, 'echomq_lane_jobs', { queue, set: 'pending' });
      expect(reported).toHaveLength(LANES_REPORTED_MAX);
      expect(valueOf(scrape, 'echomq_lane_jobs', { queue, lane: lanes[0], set: 'pending' })).toBe(3);
    } finally {
      await app.close();
    }
  });

  it("drops an obliterated queue's series from the next snapshot", async () => {
    const app = await bootProducer(`obl-${randomBytes(4).toString('hex')}`);
    try {
      const queues = app.get(QueueService);
      const metrics = app.get(EchoMqMetrics);
      const [gone, kept] = [uniqueQueue('obliterated'), uniqueQueue('kept')];
      await queues.enqueueMany(gone, [{ data: 1, lane: 'a' }, { data: 2 }]);
      await queues.enqueue(kept, { n: 1 });
      const before = parseExposition(await metrics.text());
      expect(valueOf(before, 'echomq_queue_jobs', { queue: gone, set: 'pending' })).toBe(2);
      expect(valueOf(before, 'echomq_lane_jobs', { queue: gone, lane: 'a', set: 'pending' })).toBe(1);
      expect(valueOf(before, 'echomq_transitions_total', { queue: gone, transition: 'enqueued' })).toBe(2);

      await queues.obliterate(gone);
      // A snapshot answers for a second: the next one no longer reads the queue.
      const after = await eventually(
        async () => parseExposition(await metrics.text()),
        (now) => samplesOf(now, 'echomq_queue_jobs', { queue: gone }).length === 0,
        'a snapshot after the obliterate',
      );
      for (const name of [
        'echomq_queue_jobs',
        'echomq_lane_jobs',
        'echomq_queue_lanes',
        'echomq_queue_paused',
      ]) {
        expect(samplesOf(after, name, { queue: gone })).toEqual([]);
      }
      expect(samplesOf(after, 'echomq_transitions_total', { queue: gone })).toEqual([]);
      expect(valueOf(after, 'echomq_queue_jobs', { queue: kept, set: 'pending' })).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('serves concurrent scrapes from one read: one SMEMBERS, and four commands per queue', async () => {
    const prefix = `shr-${randomBytes(4).toString('hex')}`;
    const app = await bootProducer(prefix);
    const monitor = await openMonitor();
    try {
      const queues = app.get(QueueService);
      const names = [uniqueQueue('shared'), uniqueQueue('shared'), uniqueQueue('shared')];
      for (const queue of names) {
        await queues.enqueue(queue, { n: 1 });
        // Loads the read scripts, so the scrape's calls are one EVALSHA each (no NOSCRIPT retry).
        await queues.counts(queue);
        await queues.lanes(queue);
      }
      // Redis runs commands in order and MONITOR shows them so: what comes between the two
      // markers is exactly what the scrapes sent (the warm-up's lines may still be on their way).
      const seen: string[][] = [];
      const [start, end] = [`start-${prefix}`, `end-${prefix}`];
      let counting = false;
      const ended = new Promise<void>((resolve) => {
        monitor.on('monitor', (_time: string, args: string[], source: string) => {
          const echoed = args[0]?.toLowerCase() === 'echo' ? args[1] : undefined;
          if (echoed === start) counting = true;
          if (echoed === end) resolve();
          // The commands a script runs show too, from 'lua': only what the client sent counts.
          if (counting && echoed === undefined && source !== 'lua') seen.push(args);
        });
      });
      await redis.echo(start);

      const scrapes = await Promise.all(Array.from({ length: 20 }, () => app.get(EchoMqMetrics).text()));
      for (const text of scrapes) {
        const scrape = parseExposition(text);
        expect(valueOf(scrape, 'echomq_queue_jobs', { queue: names[0], set: 'pending' })).toBe(1);
        // A counter is increased from the snapshot at each collect: concurrent ones must not add up.
        for (const queue of names) {
          expect(valueOf(scrape, 'echomq_transitions_total', { queue, transition: 'enqueued' })).toBe(1);
        }
      }
      await redis.echo(end);
      await ended;

      const named = (text: string) => seen.filter((args) => args.some((arg) => arg.includes(text)));
      expect(named(`${prefix}:queues`).map((args) => args[0].toLowerCase())).toEqual(['smembers']);
      for (const queue of names) {
        const commands = named(`${prefix}:{${queue}}`).map((args) => args[0].toLowerCase());
        expect(commands.sort()).toEqual(['evalsha', 'evalsha', 'exists', 'hgetall']);
      }
    } finally {
      monitor.disconnect();
      await app.close();
    }
  });
});
