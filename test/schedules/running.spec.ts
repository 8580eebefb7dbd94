import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Handle, Processor, QueueService, Schedule, queueKeys, type Job } from '@app/echomq/internal';
import { serverNowMs } from '../support/assertions';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, EventTail, processorClass, withTimeout } from '../worker/fixtures/support';
import { makeOverdue } from './support/downtime';
import { expectScheduleInvariants } from './support/schedule-invariants';

/** Schedules served by real workers: occurrences run, the schedule advances, missed runs follow their policy. */
describe('schedules: running occurrences', () => {
  let redis: Redis;
  let queue: string;
  let apps: INestApplication[];

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => redis.quit());
  beforeEach(() => {
    queue = uniqueQueue('sched-run');
    apps = [];
  });
  afterEach(async () => {
    await closeAll(apps);
  });

  const boot = async (...args: Parameters<typeof bootApp>): Promise<INestApplication> => {
    const app = await bootApp(...args);
    apps.push(app);
    return app;
  };

  /** Resolves with the first `count` jobs the handler saw. */
  function collector(count: number): { seen: Job[]; done: Promise<Job[]>; handler: (job: Job) => string } {
    const seen: Job[] = [];
    let finish!: (jobs: Job[]) => void;
    const done = new Promise<Job[]>((resolve) => (finish = resolve));
    return {
      seen,
      done,
      handler: (job) => {
        seen.push(job);
        if (seen.length === count) finish([...seen]);
        return 'ran';
      },
    };
  }

  it('runs an everyMs schedule again and again, one occurrence after the other', async () => {
    const runs = collector(4);
    const app = await boot([processorClass(queue, { concurrency: 2 }, runs.handler)]);
    const queues = app.get(QueueService);
    const started = await queues.upsertSchedule(queue, 'pulse', { everyMs: 100 }, { data: { beat: true } });
    const jobs = await withTimeout(runs.done, 15_000, 'four runs of the schedule');
    expect(jobs[0].id).toBe(started.nextId);
    expect(new Set(jobs.map((job) => job.id)).size).toBe(4);
    expect(jobs.every((job) => (job.data as { beat: boolean }).beat)).toBe(true);
    // Each run was planned one interval after the previous (the phase is kept).
    const planned = jobs.map((job) => job.enqueuedAt.getTime());
    expect(planned).toEqual([...planned].sort((a, b) => a - b));
    await queues.removeSchedule(queue, 'pulse');
    await app.close();
    await expectScheduleInvariants(redis, queue);
  });

  it("computes a cron schedule's next run-at on the server clock, and advances it when an occurrence runs", async () => {
    const runs = collector(1);
    const app = await boot([processorClass(queue, {}, runs.handler)]);
    const queues = app.get(QueueService);
    const before = await serverNowMs(redis);
    const { nextRunAt, nextId } = await queues.upsertSchedule(queue, 'hourly', { cron: '0 * * * *' });
    const hour = 3_600_000;
    expect(nextRunAt.getTime()).toBe(Math.floor(before / hour) * hour + hour);
    // Time passes for the occurrence: it comes due now, runs, and the next one is the next hour.
    const tail = await EventTail.open(redisUrl(), queue);
    try {
      await makeOverdue(redis, queue, nextId, 10);
      await withTimeout(runs.done, 10_000, 'the due occurrence to run');
      const enqueued = await tail.next((event) => event.type === 'enqueued');
      const view = await queues.getSchedule(queue, 'hourly');
      expect(view!.nextId).toBe(enqueued.ids);
      const now = await serverNowMs(redis);
      expect(view!.nextRunAt!.getTime()).toBe(Math.floor(now / hour) * hour + hour);
    } finally {
      tail.close();
    }
    await expectScheduleInvariants(redis, queue);
  });

  it("after downtime: 'once' runs the overdue occurrence once, 'skip' drops it for the next run", async () => {
    const producer = await boot([]);
    const queues = producer.get(QueueService);
    const hour = 3_600_000;
    const once = await queues.upsertSchedule(queue, 'once', { everyMs: hour }, { data: 'once' });
    const skip = await queues.upsertSchedule(
      queue,
      'skip',
      { everyMs: hour, missed: 'skip', missedAfterMs: 1_000 },
      { data: 'skip' },
    );
    // Ten minutes of downtime: both came due and nobody promoted them.
    const plannedOnce = await makeOverdue(redis, queue, once.nextId, 10 * 60_000);
    const plannedSkip = await makeOverdue(redis, queue, skip.nextId, 10 * 60_000);
    const tail = await EventTail.open(redisUrl(), queue);
    try {
      const runs = collector(1);
      await boot([processorClass(queue, {}, runs.handler)]);
      const [ran] = await withTimeout(runs.done, 10_000, "the 'once' occurrence to run");
      expect(ran.id).toBe(once.nextId);
      await tail.next((event) => event.type === 'completed' && event.ids === once.nextId);
      // 'skip' was replaced at boot, before the claim loop started: removed unrun.
      const events = (await redis.xrange(queueKeys(queue).events, '-', '+')).map(([, flat]) =>
        flat.join(' '),
      );
      expect(events).toContain(`type removed ids ${skip.nextId} from schedule`);
      expect(events.filter((event) => event.includes(skip.nextId))).toEqual([
        expect.stringContaining('type enqueued'),
        expect.stringContaining('type schedule-upserted'),
        `type removed ids ${skip.nextId} from schedule`,
      ]);
      expect(runs.seen.map((job) => job.data)).toEqual(['once']);
      const views = await queues.listSchedules(queue);
      const [onceView, skipView] = views;
      // The phase is kept: the next run is the planned run-at plus one interval (still ahead).
      expect(onceView.nextRunAt!.getTime()).toBe(plannedOnce + hour);
      expect(skipView.nextRunAt!.getTime()).toBe(plannedSkip + hour);
      expect(skipView.nextId).not.toBe(skip.nextId);
      expect(await redis.exists(queueKeys(queue).job(skip.nextId))).toBe(0);
    } finally {
      tail.close();
    }
    await expectScheduleInvariants(redis, queue);
  });

  it("the reaper's sweep advances a schedule whose occurrence a user removed", async () => {
    const app = await boot([processorClass(queue, {}, () => 'ok')]);
    const queues = app.get(QueueService);
    const { nextId } = await queues.upsertSchedule(queue, 'daily', { cron: '0 4 * * *', tz: 'Asia/Tokyo' });
    const tail = await EventTail.open(redisUrl(), queue);
    try {
      await queues.remove(queue, nextId);
      const enqueued = await tail.next((event) => event.type === 'enqueued');
      expect((await queues.getSchedule(queue, 'daily'))!.nextId).toBe(enqueued.ids);
    } finally {
      tail.close();
    }
    await expectScheduleInvariants(redis, queue);
  });

  it('upserts @Schedule declarations and module schedules at boot, producer-only apps included', async () => {
    const handled: string[] = [];
    @Processor(queue)
    @Schedule('on-class', { everyMs: 3_600_000, data: 'class' })
    class Declared {
      process(job: Job): void {
        handled.push(`process:${job.name}`);
      }

      @Schedule('on-method', { cron: '0 0 * * *', data: 'method' })
      @Handle('nightly')
      nightly(): void {
        handled.push('nightly');
      }
    }
    const moduleOption = {
      schedules: [{ queue, key: 'from-module', everyMs: 60_000, template: { data: 1 } }],
    };
    const producer = await boot([], { ...moduleOption, startProcessors: false });
    const queues = producer.get(QueueService);
    expect((await queues.listSchedules(queue)).map((view) => view.key)).toEqual(['from-module']);

    const worker = await boot([Declared], moduleOption);
    const views = await worker.get(QueueService).listSchedules(queue);
    expect(views.map((view) => [view.key, view.template.name ?? ''])).toEqual([
      ['from-module', ''],
      ['on-class', ''],
      ['on-method', 'nightly'],
    ]);
    const first = views.map((view) => view.nextId);
    // Booting again changes nothing: every upsert is 'unchanged'.
    const again = await boot([Declared], moduleOption);
    expect((await again.get(QueueService).listSchedules(queue)).map((view) => view.nextId)).toEqual(first);
    await expectScheduleInvariants(redis, queue);
  });
});
