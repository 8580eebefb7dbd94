import type { INestApplication } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import {
  EchoMqModule,
  InvalidArgumentError,
  JOB_IDS,
  JobNotFoundError,
  JobStateError,
  PayloadTooLargeError,
  QUEUE_DEFAULTS,
  QueueService,
  claimJobs,
  completeJob,
  failJob,
  nodeLeaseKey,
  type EchoMqModuleOptions,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { expectConsistent, serverNowMs } from '../support/assertions';
import { connect, uniqueQueue } from '../support/redis';

async function startApp(
  imports: Parameters<typeof Test.createTestingModule>[0]['imports'],
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ imports }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

describe('QueueService', () => {
  let redis: Redis;

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  describe('through EchoMqModule.forRoot', () => {
    const configured = uniqueQueue('configured');
    let app: INestApplication;
    let queues: QueueService;

    beforeAll(async () => {
      app = await startApp([
        EchoMqModule.forRoot({
          connection: { url: process.env.REDIS_URL },
          nodeId: 77,
          defaults: { maxAttempts: 5 },
          queues: { [configured]: { maxAttempts: 2, leaseMs: 7_000 } },
          maxPayloadBytes: 4_096,
        }),
      ]);
      queues = app.get(QueueService);
    });
    afterAll(async () => {
      await app.close();
    });

    it('is injectable and mints ids on the configured node', async () => {
      expect(queues).toBeInstanceOf(QueueService);
      const id = await queues.enqueue(uniqueQueue('node'), { hello: 'world' });
      expect(JOB_IDS.valid(id)).toBe(true);
      expect(JOB_IDS.parts(id)?.node).toBe(77);
    });

    describe('enqueue and getJob', () => {
      it('enqueues to pending and reads the job back', async () => {
        const queue = uniqueQueue('enq');
        const before = Date.now();
        const id = await queues.enqueue(queue, { to: 'a@b.c' }, { name: 'welcome' });
        const after = Date.now();
        const view = await queues.getJob<{ to: string }>(queue, id);
        expect(view).toMatchObject({
          id,
          queue,
          name: 'welcome',
          state: 'pending',
          data: { to: 'a@b.c' },
          attempts: 0,
          // No budget of its own: the serving worker's applies once claimed; until then the built-in 3.
          maxAttempts: 3,
          ownMaxAttempts: false,
          attemptsLeft: 3,
        });
        expect(view!.enqueuedAt.getTime()).toBeGreaterThanOrEqual(before);
        expect(view!.enqueuedAt.getTime()).toBeLessThanOrEqual(after);
        expect(view!.runAt).toBeUndefined();
        expect(view!.leaseDeadline).toBeUndefined();
        expect(await queues.counts(queue)).toEqual({ pending: 1, active: 0, schedule: 0, dead: 0 });
      });

      it('resolves queue options from the per-queue configuration, then the module defaults; a job keeps only its own maxAttempts', async () => {
        expect(queues.queueOptions(configured)).toEqual({
          ...QUEUE_DEFAULTS,
          maxAttempts: 2,
          leaseMs: 7_000,
        });
        expect(queues.queueOptions(configured, { leaseMs: 1_000 }).leaseMs).toBe(1_000);
        expect(queues.queueOptions(uniqueQueue('other')).maxAttempts).toBe(5);
        // The producer's configuration is not written on the job: the serving worker's decides.
        const id = await queues.enqueue(configured, 1);
        expect(await queues.getJob(configured, id)).toMatchObject({ ownMaxAttempts: false, maxAttempts: 3 });
        const explicit = await queues.enqueue(configured, 1, { maxAttempts: 9 });
        expect(await queues.getJob(configured, explicit)).toMatchObject({
          ownMaxAttempts: true,
          maxAttempts: 9,
        });
      });

      it('a delayed job is in schedule with its run-at', async () => {
        const queue = uniqueQueue('delay');
        const before = await serverNowMs(redis);
        const id = await queues.enqueue(queue, null, { delayMs: 60_000 });
        const after = await serverNowMs(redis);
        const view = await queues.getJob(queue, id);
        expect(view?.state).toBe('schedule');
        expect(view!.runAt!.getTime()).toBeGreaterThanOrEqual(before + 60_000);
        expect(view!.runAt!.getTime()).toBeLessThanOrEqual(after + 60_000);
        const at = new Date((await serverNowMs(redis)) + 3_600_000);
        const later = await queues.enqueue(queue, null, { runAt: at });
        expect((await queues.getJob(queue, later))?.runAt).toEqual(at);
        expect((await queues.counts(queue)).schedule).toBe(2);
      });

      it('an idempotency key returns the first job’s id', async () => {
        const queue = uniqueQueue('idem');
        const first = await queues.enqueue(queue, { n: 1 }, { idempotencyKey: 'order-7' });
        const again = await queues.enqueue(queue, { n: 2 }, { idempotencyKey: 'order-7' });
        expect(again).toBe(first);
        expect((await queues.getJob(queue, first))?.data).toEqual({ n: 1 });
        expect(await queues.counts(queue)).toMatchObject({ pending: 1 });
        expect(await queues.metrics(queue)).toEqual({ enqueued: 1 });
      });

      it('enqueueMany returns ids in input order, in mint order, all in one go', async () => {
        const queue = uniqueQueue('many');
        const ids = await queues.enqueueMany(queue, [
          { data: 'a' },
          { data: 'b', delayMs: 60_000 },
          { data: 'c', name: 'third' },
        ]);
        expect(ids).toHaveLength(3);
        expect([...ids].sort()).toEqual(ids);
        expect(await queues.counts(queue)).toEqual({ pending: 2, active: 0, schedule: 1, dead: 0 });
        expect((await queues.getJob(queue, ids[2]))?.name).toBe('third');
        expect(await queues.enqueueMany(queue, [])).toEqual([]);
      });

      it('enqueueMany with one bad job enqueues none of them', async () => {
        const queue = uniqueQueue('many-bad');
        await expect(
          queues.enqueueMany(queue, [{ data: 1 }, { data: 2, maxAttempts: 0 }, { data: 3 }]),
        ).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(
          queues.enqueueMany<unknown>(queue, [{ data: 1 }, { data: 'x'.repeat(5_000) }]),
        ).rejects.toBeInstanceOf(PayloadTooLargeError);
        expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
        expect(await queues.listQueues()).not.toContain(queue);
      });

      it('enqueueMany refuses a non-array and more than 10000 jobs', async () => {
        const queue = uniqueQueue('many-limits');
        await expect(queues.enqueueMany(queue, { length: 1 } as never)).rejects.toBeInstanceOf(
          InvalidArgumentError,
        );
        const tooMany = Array.from({ length: 10_001 }, () => ({ data: 0 }));
        await expect(queues.enqueueMany(queue, tooMany)).rejects.toBeInstanceOf(InvalidArgumentError);
        expect((await queues.counts(queue)).pending).toBe(0);
      });

      it('refuses bad options before writing anything', async () => {
        const queue = uniqueQueue('bad-options');
        await expect(queues.enqueue(queue, 1, { delayMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(queues.enqueue(queue, 1, { maxAttempts: 0 })).rejects.toBeInstanceOf(
          InvalidArgumentError,
        );
        await expect(queues.enqueue(queue, 10n)).rejects.toBeInstanceOf(InvalidArgumentError);
        await expect(queues.enqueue(queue, 'x'.repeat(4_095))).rejects.toBeInstanceOf(PayloadTooLargeError);
        expect(
          await redis.exists(queues.context(queue).keys.pending, queues.context(queue).keys.metrics),
        ).toBe(0);
        // The limit is the module's maxPayloadBytes: 4094 characters + 2 quotes is exactly 4096 bytes.
        await queues.enqueue(queue, 'x'.repeat(4_094));
        expect((await queues.counts(queue)).pending).toBe(1);
      });
    });

    describe('getJob in every state', () => {
      const queue = uniqueQueue('states');
      const ids: Record<string, string> = {};
      let deadline = 0;

      beforeAll(async () => {
        const [active, dead, completed, gone] = await queues.enqueueMany(queue, [
          { data: 'active' },
          { data: 'dead', maxAttempts: 1 },
          { data: 'completed' },
          { data: 'gone' },
        ]);
        Object.assign(ids, { active, dead, completed, gone });
        ids.pending = await queues.enqueue(queue, 'pending');
        ids.schedule = await queues.enqueue(queue, 'schedule', { delayMs: 60_000 });
        const ctx = queues.context(queue);
        // Claimed as a worker would: under its resolved maxAttempts (the module default, 5).
        const { maxAttempts } = queues.queueOptions(queue);
        const batch = await claimJobs(ctx, { count: 4, leaseMs: 30_000, claimantPrefix: 'w', maxAttempts });
        deadline = batch.leaseDeadline;
        const [, deadJob, completedJob, goneJob] = batch.jobs;
        await failJob(ctx, deadJob, { error: 'kaput', backoffMs: 0, unrecoverable: false });
        await completeJob(ctx, completedJob, JSON.stringify({ sent: 3 }), 60_000);
        await completeJob(ctx, goneJob, '', 0);
      });

      it('pending', async () => {
        expect((await queues.getJob(queue, ids.pending))?.state).toBe('pending');
      });

      it('schedule, with its run-at', async () => {
        const view = await queues.getJob(queue, ids.schedule);
        expect(view?.state).toBe('schedule');
        expect(view?.runAt).toBeInstanceOf(Date);
      });

      it('active, with its attempt and lease deadline', async () => {
        const view = await queues.getJob(queue, ids.active);
        expect(view).toMatchObject({ state: 'active', data: 'active', attempts: 1, attemptsLeft: 4 });
        expect(view?.leaseDeadline).toEqual(new Date(deadline));
      });

      it('dead, with its last error and no attempts left', async () => {
        expect(await queues.getJob(queue, ids.dead)).toMatchObject({
          state: 'dead',
          lastError: 'kaput',
          attempts: 1,
          maxAttempts: 1,
          attemptsLeft: 0,
        });
      });

      it('completed, with its result and finish time', async () => {
        const view = await queues.getJob(queue, ids.completed);
        expect(view).toMatchObject({ state: 'completed', result: { sent: 3 } });
        expect(view?.finishedAt).toBeInstanceOf(Date);
      });

      it('unknown reads as undefined', async () => {
        expect(await queues.getJob(queue, ids.gone)).toBeUndefined();
        expect(await queues.getJob(queue, JOB_IDS.format(1n))).toBeUndefined();
      });

      it('counts and metrics agree', async () => {
        expect(await queues.counts(queue)).toEqual({ pending: 1, active: 1, schedule: 1, dead: 1 });
        expect(await queues.metrics(queue)).toEqual({ enqueued: 6, claimed: 4, dead: 1, completed: 2 });
        await expectConsistent(redis, queues.context(queue).keys);
      });
    });

    describe('retry and remove', () => {
      it('retry moves a dead job back to pending with a fresh budget', async () => {
        const queue = uniqueQueue('retry');
        const id = await queues.enqueue(queue, 1, { maxAttempts: 1 });
        const ctx = queues.context(queue);
        const [job] = (await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: 'w' })).jobs;
        await failJob(ctx, job, { error: 'x', backoffMs: 0, unrecoverable: false });
        expect((await queues.getJob(queue, id))?.attemptsLeft).toBe(0);
        await queues.retry(queue, id);
        expect(await queues.getJob(queue, id)).toMatchObject({
          state: 'pending',
          attempts: 1,
          attemptsLeft: 1,
        });
        expect((await queues.metrics(queue)).retried).toBe(1);
      });

      it('retry of a job that is not dead raises JobStateError; of an unknown one JobNotFoundError', async () => {
        const queue = uniqueQueue('retry-bad');
        const id = await queues.enqueue(queue, 1);
        await expect(queues.retry(queue, id)).rejects.toBeInstanceOf(JobStateError);
        await expect(queues.retry(queue, JOB_IDS.format(5n))).rejects.toBeInstanceOf(JobNotFoundError);
        expect((await queues.getJob(queue, id))?.state).toBe('pending');
      });

      it('remove deletes a job from its state and reports which', async () => {
        const queue = uniqueQueue('remove');
        const pending = await queues.enqueue(queue, 1);
        const scheduled = await queues.enqueue(queue, 2, { delayMs: 60_000 });
        expect(await queues.remove(queue, scheduled)).toBe('schedule');
        expect(await queues.remove(queue, pending)).toBe('pending');
        expect(await queues.getJob(queue, pending)).toBeUndefined();
        expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
        await expect(queues.remove(queue, pending)).rejects.toBeInstanceOf(JobNotFoundError);
      });
    });

    describe('pause and resume', () => {
      it('a paused queue accepts jobs but gives none out until resumed', async () => {
        const queue = uniqueQueue('pause');
        const ctx = queues.context(queue);
        expect(await queues.isPaused(queue)).toBe(false);
        await queues.pause(queue);
        expect(await queues.isPaused(queue)).toBe(true);
        const id = await queues.enqueue(queue, 1);
        expect((await claimJobs(ctx, { count: 5, leaseMs: 30_000, claimantPrefix: 'w' })).jobs).toEqual([]);
        expect((await queues.getJob(queue, id))?.state).toBe('pending');

        await redis.del(ctx.keys.wake);
        await queues.resume(queue);
        expect(await queues.isPaused(queue)).toBe(false);
        // Resume wakes idle workers.
        expect(await redis.llen(ctx.keys.wake)).toBeGreaterThan(0);
        const { jobs } = await claimJobs(ctx, { count: 5, leaseMs: 30_000, claimantPrefix: 'w2' });
        expect(jobs.map((j) => j.id)).toEqual([id]);
      });
    });

    describe('listQueues', () => {
      it('lists every queue enqueued to, sorted', async () => {
        const a = uniqueQueue('list-b');
        const b = uniqueQueue('list-a');
        await queues.enqueue(a, 1);
        await queues.enqueue(b, 1);
        const names = await queues.listQueues();
        expect(names).toEqual(expect.arrayContaining([a, b]));
        expect(names).toEqual([...names].sort());
        await queues.register(a); // idempotent
        expect((await queues.listQueues()).filter((name) => name === a)).toHaveLength(1);
      });
    });
  });

  describe('through EchoMqModule.forRootAsync with useFactory', () => {
    let app: INestApplication;
    let queues: QueueService;

    beforeAll(async () => {
      app = await startApp([
        EchoMqModule.forRootAsync({
          imports: [
            ConfigModule.forRoot({
              ignoreEnvFile: true,
              load: [() => ({ echomq: { url: process.env.REDIS_URL, payloadLimit: 64 } })],
            }),
          ],
          inject: [ConfigService],
          useFactory: (config: ConfigService): EchoMqModuleOptions => ({
            connection: { url: config.getOrThrow<string>('echomq.url') },
            maxPayloadBytes: config.getOrThrow<number>('echomq.payloadLimit'),
            defaults: { maxAttempts: 4 },
          }),
        }),
      ]);
      queues = app.get(QueueService);
    });
    afterAll(async () => {
      await app.close();
    });

    it('provides QueueService with the factory’s settings', async () => {
      const queue = uniqueQueue('async');
      const id = await queues.enqueue(queue, { small: true });
      expect(await queues.getJob(queue, id)).toMatchObject({
        state: 'pending',
        data: { small: true },
      });
      expect(queues.queueOptions(queue).maxAttempts).toBe(4);
      expect(queues.settings.maxPayloadBytes).toBe(64);
      await expect(queues.enqueue(queue, 'x'.repeat(100))).rejects.toBeInstanceOf(PayloadTooLargeError);
    });
  });

  describe('node number leasing', () => {
    it('leases a node number from Redis when none is configured, and gives it back on close', async () => {
      const app = await startApp([EchoMqModule.forRoot({ connection: { url: process.env.REDIS_URL } })]);
      let node: number | undefined;
      try {
        const queue = uniqueQueue('lease');
        const id = await app.get(QueueService).enqueue(queue, 1);
        node = JOB_IDS.parts(id)!.node;
        expect(await redis.exists(nodeLeaseKey(node))).toBe(1);
        expect(await redis.pttl(nodeLeaseKey(node))).toBeGreaterThan(0);
      } finally {
        await app.close();
      }
      expect(await redis.exists(nodeLeaseKey(node))).toBe(0);
    });
  });
});
