import type { INestApplication, Provider } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  EchoMqModule,
  InvalidArgumentError,
  Processor,
  QueueService,
  queueKeys,
  type EchoMqModuleOptions,
  type FlowLimits,
  type QueueOptions,
} from '@app/echomq/internal';
import { writeLimits } from '@app/echomq/scripts/set-limits';
import type { Redis } from 'ioredis';
import { CapturedLog } from '../support/captured-log';
import { connect, redisUrl, scriptContext, uniqueQueue } from '../support/redis';

const NO_LIMITS: FlowLimits = {
  rateLimit: null,
  globalConcurrency: null,
  laneConcurrency: null,
  laneRateLimit: null,
};

/** A processor class for `queue` with these options: its app registers the queue at bootstrap. */
function processorFor(queue: string, options: QueueOptions = {}): Provider {
  @Processor(queue, options)
  class FlowProcessor {
    process(): void {}
  }
  return FlowProcessor;
}

/**
 * One process of the fleet: an application whose processors are discovered, checked and
 * registered at boot (which writes the limits it configures), but claim nothing.
 */
async function bootProcess(
  log: CapturedLog,
  providers: Provider[],
  options: Partial<EchoMqModuleOptions> = {},
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() }, startProcessors: false, ...options })],
    providers,
  }).compile();
  const app = moduleRef.createNestApplication({ logger: log });
  await app.init();
  return app;
}

/** A call refused before anything was sent: InvalidArgumentError, and no key of the queue written. */
async function expectRefusedUnsent(redis: Redis, queue: string, call: () => Promise<unknown>): Promise<void> {
  const before = await redis.keys(`${queueKeys(queue).base}*`);
  await expect(call()).rejects.toBeInstanceOf(InvalidArgumentError);
  expect((await redis.keys(`${queueKeys(queue).base}*`)).sort()).toEqual(before.sort());
}

describe('flow control through QueueService', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  describe('limits configured in the processes of a fleet', () => {
    const warnings = (log: CapturedLog, queue: string) =>
      log.matching((line) => line.level === 'warn' && line.message.startsWith(`Queue ${queue}:`));

    it('are written at boot, the last process to boot winning, with a warning naming what it changed', async () => {
      const queue = uniqueQueue('flow-boot');
      const firstLog = new CapturedLog();
      const first = await bootProcess(firstLog, [processorFor(queue)], {
        queues: { [queue]: { rateLimit: { max: 10, windowMs: 1_000 } } },
      });
      try {
        const queues = first.get(QueueService);
        expect(await queues.getLimits(queue)).toEqual({
          ...NO_LIMITS,
          rateLimit: { max: 10, windowMs: 1_000 },
        });
        // Nothing was stored before: nothing to warn about.
        expect(warnings(firstLog, queue)).toEqual([]);

        const secondLog = new CapturedLog();
        const second = await bootProcess(
          secondLog,
          // The @Processor's options win over queues.<q>, which wins over defaults.
          [processorFor(queue, { rateLimit: { max: 5, windowMs: 1_000 }, globalConcurrency: 3 })],
          {
            defaults: { globalConcurrency: 7, laneConcurrency: 2 },
            queues: { [queue]: { rateLimit: { max: 20, windowMs: 1_000 } } },
          },
        );
        try {
          expect(await queues.getLimits(queue)).toEqual({
            rateLimit: { max: 5, windowMs: 1_000 },
            globalConcurrency: 3,
            laneConcurrency: 2,
            laneRateLimit: null,
          });
          // Only the setting that was stored with another value is named.
          expect(warnings(secondLog, queue).map((line) => line.message)).toEqual([
            `Queue ${queue}: rateLimit was 10 per 1000 ms in Redis (set by another process or an admin call); ` +
              "this process's configuration sets 5 per 1000 ms",
          ]);
        } finally {
          await second.close();
        }
      } finally {
        await first.close();
      }
    });

    it('are left as Redis has them by a process that configures none, and cleared by one that gives null', async () => {
      const queue = uniqueQueue('flow-keep');
      await writeLimits(scriptContext(redis, queue), {
        rateLimit: { max: 5, windowMs: 1_000 },
        globalConcurrency: 3,
        laneConcurrency: 2,
      });
      const quietLog = new CapturedLog();
      const quiet = await bootProcess(quietLog, [processorFor(queue)]);
      try {
        const queues = quiet.get(QueueService);
        expect((await queues.getLimits(queue)).rateLimit).toEqual({ max: 5, windowMs: 1_000 });
        expect(warnings(quietLog, queue)).toEqual([]);
      } finally {
        await quiet.close();
      }

      const clearingLog = new CapturedLog();
      const clearing = await bootProcess(clearingLog, [processorFor(queue, { globalConcurrency: null })]);
      try {
        expect(await clearing.get(QueueService).getLimits(queue)).toEqual({
          rateLimit: { max: 5, windowMs: 1_000 },
          globalConcurrency: null,
          laneConcurrency: 2,
          laneRateLimit: null,
        });
        expect(warnings(clearingLog, queue).map((line) => line.message)).toEqual([
          `Queue ${queue}: globalConcurrency was 3 in Redis (set by another process or an admin call); ` +
            "this process's configuration sets none",
        ]);
      } finally {
        await clearing.close();
      }
    });

    it('are written at bootstrap by a producer configured under queues.<name>; one configured with nothing writes none', async () => {
      const configured = uniqueQueue('flow-producer');
      const bare = uniqueQueue('flow-bare');
      const log = new CapturedLog();
      const app = await bootProcess(log, [], { queues: { [configured]: { laneConcurrency: 4 } } });
      try {
        const queues = app.get(QueueService);
        // Before any enqueue: the boot wrote them.
        expect((await queues.getLimits(configured)).laneConcurrency).toBe(4);
        await queues.enqueue(bare, { n: 1 });
        expect(await redis.exists(queueKeys(bare).settings)).toBe(0);
        expect(await queues.getLimits(bare)).toEqual(NO_LIMITS);
      } finally {
        await app.close();
      }
    });

    it("are not written over an admin's setLimits by the same process's first enqueue", async () => {
      const queue = uniqueQueue('flow-admin-first');
      const log = new CapturedLog();
      const app = await bootProcess(log, [], {
        queues: { [queue]: { rateLimit: { max: 100, windowMs: 1_000 } } },
      });
      try {
        const queues = app.get(QueueService);
        await queues.setLimits(queue, { rateLimit: { max: 10, windowMs: 1_000 } });
        await queues.enqueue(queue, { n: 1 });
        await queues.enqueueMany(queue, [{ data: 2 }, { data: 3 }]);
        expect((await queues.getLimits(queue)).rateLimit).toEqual({ max: 10, windowMs: 1_000 });
        expect(warnings(log, queue)).toEqual([]);
      } finally {
        await app.close();
      }
    });

    it("given only by the module defaults, are written at the queue's first enqueue, unless an admin call came first", async () => {
      const written = uniqueQueue('flow-defaults');
      const adminFirst = uniqueQueue('flow-defaults-admin');
      const log = new CapturedLog();
      const app = await bootProcess(log, [], { defaults: { globalConcurrency: 4 } });
      try {
        const queues = app.get(QueueService);
        // Not known by name at boot: nothing is written until the queue is used.
        expect(await redis.exists(queueKeys(written).settings)).toBe(0);
        await queues.enqueue(written, { n: 1 });
        expect((await queues.getLimits(written)).globalConcurrency).toBe(4);

        await queues.setLimits(adminFirst, { globalConcurrency: 9 });
        await queues.enqueue(adminFirst, { n: 1 });
        expect((await queues.getLimits(adminFirst)).globalConcurrency).toBe(9);
        expect(warnings(log, adminFirst)).toEqual([]);
      } finally {
        await app.close();
      }
    });

    it('are compared, written and warned about once when several first enqueues run at once', async () => {
      const queue = uniqueQueue('flow-race');
      await writeLimits(scriptContext(redis, queue), { globalConcurrency: 2 });
      const log = new CapturedLog();
      const app = await bootProcess(log, [], { defaults: { globalConcurrency: 3 } });
      try {
        const queues = app.get(QueueService);
        await Promise.all(Array.from({ length: 8 }, (_, n) => queues.enqueue(queue, { n })));
        expect((await queues.getLimits(queue)).globalConcurrency).toBe(3);
        expect(warnings(log, queue).map((line) => line.message)).toEqual([
          `Queue ${queue}: globalConcurrency was 2 in Redis (set by another process or an admin call); ` +
            "this process's configuration sets 3",
        ]);
      } finally {
        await app.close();
      }
    });
  });

  describe('admin calls', () => {
    let app: INestApplication;
    let queues: QueueService;

    beforeAll(async () => {
      app = await bootProcess(new CapturedLog(), []);
      queues = app.get(QueueService);
    });
    afterAll(async () => {
      await app.close();
    });

    it('setLimits and getLimits round-trip; null clears, a limit left out stays', async () => {
      const queue = uniqueQueue('flow-limits');
      expect(await queues.getLimits(queue)).toEqual(NO_LIMITS);
      const all: FlowLimits = {
        rateLimit: { max: 100, windowMs: 60_000 },
        globalConcurrency: 8,
        laneConcurrency: 2,
        laneRateLimit: { max: 3, windowMs: 500 },
      };
      await queues.setLimits(queue, all);
      expect(await queues.getLimits(queue)).toEqual(all);
      await queues.setLimits(queue, { globalConcurrency: null, laneRateLimit: { max: 4, windowMs: 250 } });
      expect(await queues.getLimits(queue)).toEqual({
        ...all,
        globalConcurrency: null,
        laneRateLimit: { max: 4, windowMs: 250 },
      });
      await queues.setLimits(queue, {});
      expect((await queues.getLimits(queue)).rateLimit).toEqual({ max: 100, windowMs: 60_000 });
    });

    it('setLimits refuses bad limits before anything is sent', async () => {
      const queue = uniqueQueue('flow-limits-bad');
      await queues.setLimits(queue, { globalConcurrency: 5 });
      const bad: unknown[] = [
        { globalConcurrency: 0 },
        { rateLimit: { max: 1 } },
        { rateLimit: { max: 1, windowMs: 86_400_001 } },
        { laneRateLimit: { max: 0, windowMs: 10 } },
        { laneConcurrency: 1.5 },
        { concurrency: 5 },
        null,
      ];
      for (const limits of bad) {
        await expectRefusedUnsent(redis, queue, () => queues.setLimits(queue, limits as Partial<FlowLimits>));
      }
      expect((await queues.getLimits(queue)).globalConcurrency).toBe(5);
    });

    it('setLane, pauseLane and resumeLane show in lanes() of lanes with work', async () => {
      const queue = uniqueQueue('flow-lanes');
      await queues.setLane(queue, 'acme', { weight: 3, concurrency: 2 });
      await queues.enqueue(queue, { n: 1 }, { lane: 'acme' });
      await queues.enqueue(queue, { n: 1 }, { lane: 'globex' });
      const byName = async () =>
        Object.fromEntries((await queues.lanes(queue)).map((view) => [view.lane, view]));

      let lanes = await byName();
      expect(lanes.acme).toMatchObject({
        lane: 'acme',
        pending: 1,
        active: 0,
        paused: false,
        weight: 3,
        concurrency: 2,
      });
      expect(lanes.globex).toMatchObject({ lane: 'globex', pending: 1, active: 0, paused: false, weight: 1 });
      expect((await queues.lanes(queue)).map((view) => view.lane)).toEqual(['acme', 'globex']);

      await queues.pauseLane(queue, 'globex');
      await queues.pauseLane(queue, 'globex'); // idempotent
      expect((await byName()).globex.paused).toBe(true);
      await queues.resumeLane(queue, 'globex');
      await queues.resumeLane(queue, 'globex');
      expect((await byName()).globex.paused).toBe(false);

      await queues.setLane(queue, 'acme', { weight: null });
      lanes = await byName();
      expect(lanes.acme).toMatchObject({ weight: 1, concurrency: 2 });
    });

    it('lane calls refuse a bad lane or setting before anything is sent', async () => {
      const queue = uniqueQueue('flow-lanes-bad');
      await queues.setLane(queue, 'acme', { weight: 2 });
      const calls: (() => Promise<unknown>)[] = [
        () => queues.setLane(queue, 'bad lane', { weight: 2 }),
        () => queues.setLane(queue, 'acme', { weight: 0 }),
        () => queues.setLane(queue, 'acme', { weight: 1_001 }),
        () => queues.setLane(queue, 'acme', { concurrency: 0 }),
        () => queues.setLane(queue, 'acme', { concurrency: 1_000_001 }),
        () => queues.setLane(queue, 'acme', { weight: 2, share: 1 } as never),
        () => queues.pauseLane(queue, ''),
        () => queues.resumeLane(queue, 'x'.repeat(65)),
      ];
      for (const call of calls) await expectRefusedUnsent(redis, queue, call);
    });

    it('refusals name the key as what it is not, and say what was given', async () => {
      const queue = uniqueQueue('flow-admin-messages');
      await expect(queues.setLimits(queue, { concurrency: 5 } as never)).rejects.toThrow(
        'concurrency is not a limit; known: rateLimit, globalConcurrency, laneConcurrency, laneRateLimit',
      );
      await expect(
        queues.setLimits(queue, { rateLimit: { max: 1, windowMs: 10, burst: 2 } } as never),
      ).rejects.toThrow('rateLimit.burst is not a field of a rate limit; known: max, windowMs');
      await expect(queues.setLimits(queue, { globalConcurrency: 0 })).rejects.toThrow(
        'globalConcurrency must be an integer from 1 to 1,000,000, got 0',
      );
      await expect(queues.setLane(queue, 'acme', { share: 1 } as never)).rejects.toThrow(
        'share is not a lane setting; known: weight, concurrency',
      );
      await expect(queues.pauseLane(queue, 'bad lane')).rejects.toThrow(
        'lane must be 1 to 64 characters from A-Z a-z 0-9 _ . : @ + = -, got "bad lane"',
      );
    });
  });

  describe('jobs with a lane, a priority and a timeout', () => {
    let app: INestApplication;
    let queues: QueueService;

    beforeAll(async () => {
      app = await bootProcess(new CapturedLog(), []);
      queues = app.get(QueueService);
    });
    afterAll(async () => {
      await app.close();
    });

    it('show them in their view, and the defaults for a job without them', async () => {
      const queue = uniqueQueue('flow-view');
      const plain = await queues.enqueue(queue, { n: 1 });
      const routed = await queues.enqueue(queue, { n: 2 }, { lane: 'acme', priority: 7, timeoutMs: 2_500 });
      expect(await queues.getJob(queue, plain)).toMatchObject({
        state: 'pending',
        lane: 'default',
        priority: 0,
        timeoutMs: null,
      });
      expect(await queues.getJob(queue, routed)).toMatchObject({
        state: 'pending',
        lane: 'acme',
        priority: 7,
        timeoutMs: 2_500,
      });
    });

    it('are counted as pending and browsed by lane and priority', async () => {
      const queue = uniqueQueue('flow-browse');
      const plain = await queues.enqueue(queue, { n: 1 });
      const low = await queues.enqueue(queue, { n: 2 }, { lane: 'acme' });
      const high = await queues.enqueue(queue, { n: 3 }, { lane: 'acme', priority: 5 });
      const other = await queues.enqueue(queue, { n: 4 }, { lane: 'globex', priority: 5 });
      expect(await queues.counts(queue)).toEqual({ pending: 4, active: 0, schedule: 0, dead: 0 });
      expect(await queues.browse(queue, 'pending')).toEqual([other, high, low, plain]);
      expect(await queues.browse(queue, 'pending', { lane: 'acme' })).toEqual([high, low]);
      expect(await queues.browse(queue, 'pending', { lane: 'acme', priority: 5 })).toEqual([high]);
      expect(await queues.browse(queue, 'pending', { lane: 'default' })).toEqual([plain]);
      expect(await queues.browse(queue, 'pending', { priority: 5 })).toEqual([other, high]);
      expect(await queues.browse(queue, 'pending', { limit: 2 })).toEqual([other, high]);
      expect(await queues.browse(queue, 'pending', { after: high })).toEqual([low, plain]);
    });

    it('are refused with a bad lane, priority or timeout, nothing written', async () => {
      const queue = uniqueQueue('flow-bad');
      await queues.enqueue(queue, { n: 0 });
      const bad: Record<string, unknown>[] = [
        { lane: 'a b' },
        { lane: '' },
        { priority: 10 },
        { priority: -1 },
        { priority: 2.5 },
        { timeoutMs: 0 },
        { timeoutMs: 604_800_001 },
      ];
      for (const options of bad) {
        await expectRefusedUnsent(redis, queue, () => queues.enqueue(queue, { n: 1 }, options));
      }
      const reads: (() => Promise<unknown>)[] = [
        () => queues.browse(queue, 'pending', { lane: 'a b' }),
        () => queues.browse(queue, 'pending', { lane: 'acme', priority: 10 }),
        () => queues.browse(queue, 'dead', { lane: 'acme' }),
      ];
      for (const read of reads) await expect(read()).rejects.toBeInstanceOf(InvalidArgumentError);
      expect((await queues.counts(queue)).pending).toBe(1);
    });

    it('are refused naming the value given, and the item of an enqueueMany of several', async () => {
      const queue = uniqueQueue('flow-bad-item');
      await expect(queues.enqueue(queue, { n: 1 }, { priority: 10 })).rejects.toThrow(
        'priority must be an integer from 0 to 9, got 10',
      );
      await expect(queues.enqueueMany(queue, [{ data: 1, lane: 'a b' }])).rejects.toThrow(
        /^lane must be 1 to 64 characters .*, got "a b"$/,
      );
      await expect(
        queues.enqueueMany(queue, [{ data: 0 }, { data: 1 }, { data: 2 }, { data: 3, lane: 'a b' }]),
      ).rejects.toThrow(/^jobs\[3\]\.lane must be 1 to 64 characters .*, got "a b"$/);
      await expect(queues.enqueueMany(queue, [{ data: 0 }, { data: 1, timeoutMs: 0 }])).rejects.toThrow(
        'jobs[1].timeoutMs must be an integer from 1 to 604800000, got 0',
      );
      await expect(queues.enqueueMany(queue, [{ data: 0 }, { data: 1, idempotencyKey: '' }])).rejects.toThrow(
        /^jobs\[1\]\.idempotencyKey: /,
      );
      expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    });
  });
});
