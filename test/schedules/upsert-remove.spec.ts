import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  InvalidArgumentError,
  QueueService,
  claimJobs,
  promoteDue,
  queueKeys,
  upsertScheduleScript,
} from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { expectScheduleInvariants } from './support/schedule-invariants';

/** upsertSchedule / removeSchedule / listSchedules against a real Redis, no workers running. */
describe('schedules: upsert, change, remove', () => {
  let app: INestApplication;
  let queues: QueueService;
  let redis: Redis;
  let queue: string;

  beforeAll(async () => {
    app = await bootApp([]);
    queues = app.get(QueueService);
    redis = connect();
  });
  afterAll(async () => {
    await app.close();
    await redis.quit();
  });
  beforeEach(() => {
    queue = uniqueQueue('sched');
  });
  afterEach(async () => expectScheduleInvariants(redis, queue));

  const keys = () => queueKeys(queue);
  const waiting = async () => redis.zrange(keys().schedule, 0, -1);

  it('creates one next occurrence, and upserting it again changes nothing', async () => {
    const first = await queues.upsertSchedule(queue, 'hourly', { cron: '0 * * * *' }, { data: { n: 1 } });
    expect(first.outcome).toBe('created');
    expect(first.nextRunAt.getUTCMinutes()).toBe(0);
    expect(await waiting()).toEqual([first.nextId]);
    const row = await redis.hgetall(keys().job(first.nextId));
    expect(row).toMatchObject({ d: '{"n":1}', sk: 'hourly', sa: String(first.nextRunAt.getTime()) });

    const again = await queues.upsertSchedule(queue, 'hourly', { cron: '0 * * * *' }, { data: { n: 1 } });
    expect(again).toEqual({ ...first, outcome: 'unchanged' });
    expect(await waiting()).toEqual([first.nextId]);
  });

  it('replaces the waiting occurrence when the schedule changes', async () => {
    const first = await queues.upsertSchedule(queue, 'tick', { everyMs: 60_000 }, { data: 1 });
    const changed = await queues.upsertSchedule(queue, 'tick', { everyMs: 60_000 }, { data: 2, name: 'two' });
    expect(changed.outcome).toBe('updated');
    expect(changed.nextId).not.toBe(first.nextId);
    // Same spec: the waiting run keeps its run-at (a new template does not move the phase).
    expect(changed.nextRunAt).toEqual(first.nextRunAt);
    expect(await waiting()).toEqual([changed.nextId]);
    expect(await redis.exists(keys().job(first.nextId))).toBe(0);
    expect(await redis.hmget(keys().job(changed.nextId), 'd', 'n')).toEqual(['2', 'two']);

    const faster = await queues.upsertSchedule(queue, 'tick', { everyMs: 1_000 }, { data: 2, name: 'two' });
    expect(faster.outcome).toBe('updated');
    expect(faster.nextRunAt.getTime()).toBeLessThan(first.nextRunAt.getTime());
    expect(await waiting()).toEqual([faster.nextId]);
  });

  it('stores the template as enqueue would, and lists and reads schedules by key', async () => {
    await queues.upsertSchedule(
      queue,
      'b',
      { cron: '30 2 * * *', tz: 'Europe/Berlin', missed: 'skip' },
      {
        data: { report: 'daily' },
        name: 'report',
        maxAttempts: 5,
        backoff: { type: 'fixed', delayMs: 1_000 },
        lane: 'tenant-1',
        priority: 3,
        timeoutMs: 30_000,
      },
    );
    const a = await queues.upsertSchedule(queue, 'a', { everyMs: 5_000 });
    const b = await queues.getSchedule(queue, 'b');
    expect(b).toMatchObject({
      key: 'b',
      spec: { cron: '30 2 * * *', tz: 'Europe/Berlin' },
      options: { missed: 'skip', missedAfterMs: 60_000 },
      template: {
        data: { report: 'daily' },
        name: 'report',
        maxAttempts: 5,
        backoff: { type: 'fixed', delayMs: 1_000 },
        lane: 'tenant-1',
        priority: 3,
        timeoutMs: 30_000,
      },
    });
    const row = await redis.hgetall(keys().job(b!.nextId!));
    expect(row).toMatchObject({ n: 'report', m: '5', l: 'tenant-1', y: '3', t: '30000', sk: 'b' });
    expect(JSON.parse(row.o)).toEqual({ type: 'fixed', delayMs: 1_000 });

    const listed = await queues.listSchedules(queue);
    expect(listed.map((view) => view.key)).toEqual(['a', 'b']);
    expect(listed[0]).toMatchObject({ nextId: a.nextId, nextRunAt: a.nextRunAt, template: { data: null } });
    expect((await queues.listSchedules(queue, { after: 'a' })).map((view) => view.key)).toEqual(['b']);
    expect(await queues.listSchedules(queue, { limit: 1 })).toHaveLength(1);
    expect(await queues.getSchedule(queue, 'none')).toBeUndefined();
  });

  it('refuses bad input before anything is sent', async () => {
    const refused: [object, object?][] = [
      [{ cron: 'every day' }],
      [{ cron: '61 * * * *' }],
      [{ cron: '0 0 30 2 *' }], // never runs
      [{ cron: '* * * * *', tz: 'Mars/Olympus' }],
      [{ everyMs: 0 }],
      [{ everyMs: 1.5 }],
      [{ everyMs: 1_000, tz: 'UTC' }],
      [{ everyMs: 1_000, cron: '* * * * *' }],
      [{}],
      [{ everyMs: 1_000, missed: 'later' }],
      [{ everyMs: 1_000, missedAfterMs: -1 }],
      [{ everyMs: 1_000 }, { priority: 11 }],
      [{ everyMs: 1_000 }, { lane: 'not a lane' }],
      [{ everyMs: 1_000 }, { maxAttempts: 0 }],
      [{ everyMs: 1_000 }, { delayMs: 5 }],
      [{ everyMs: 1_000 }, { data: BigInt(1) }],
    ];
    for (const [spec, template] of refused) {
      await expect(
        queues.upsertSchedule(queue, 'k', spec as never, template as never),
      ).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    for (const key of ['', 'has space', 'x'.repeat(129), 'brace{']) {
      await expect(queues.upsertSchedule(queue, key, { everyMs: 1_000 })).rejects.toBeInstanceOf(
        InvalidArgumentError,
      );
      await expect(queues.removeSchedule(queue, key)).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(await redis.exists(keys().schedulers, keys().schedulerNext, keys().schedule)).toBe(0);
  });

  it('removes the schedule with its waiting occurrence, also when it is due but not promoted', async () => {
    const { nextId } = await queues.upsertSchedule(queue, 'gone', { everyMs: 60_000 });
    // Overdue: the score in the past, as downtime leaves it (no process promoted it).
    await redis.zadd(keys().schedule, Date.now() - 5_000, nextId);
    expect(await queues.removeSchedule(queue, 'gone')).toBe(true);
    expect(await waiting()).toEqual([]);
    expect(await redis.exists(keys().job(nextId))).toBe(0);
    expect(await queues.removeSchedule(queue, 'gone')).toBe(false);
    expect(await queues.getSchedule(queue, 'gone')).toBeUndefined();
  });

  it('removes a promoted (pending) occurrence, and leaves a running one to finish', async () => {
    const ctx = queues.context(queue);
    const pending = await queues.upsertSchedule(queue, 'p', { everyMs: 60_000 }, { lane: 'l1' });
    await redis.zadd(keys().schedule, 1, pending.nextId);
    await promoteDue(ctx, 10);
    expect(await redis.zrange(keys().pendingOf('l1'), 0, -1)).toEqual([pending.nextId]);
    expect(await queues.removeSchedule(queue, 'p')).toBe(true);
    expect(await redis.exists(keys().job(pending.nextId), keys().pendingOf('l1'))).toBe(0);
    expect(await redis.zrange(keys().ready(0), 0, -1)).toEqual([]);

    const running = await queues.upsertSchedule(queue, 'r', { everyMs: 60_000 });
    await redis.zadd(keys().schedule, 1, running.nextId);
    const batch = await claimJobs(ctx, { count: 5, leaseMs: 30_000, claimantPrefix: 'test-claim-1' });
    expect(batch.jobs.map((job) => [job.id, job.scheduleKey])).toEqual([[running.nextId, 'r']]);
    expect(await queues.removeSchedule(queue, 'r')).toBe(true);
    expect(await redis.zscore(keys().active, running.nextId)).not.toBeNull();
    // Its advance now finds no schedule: nothing is created.
    expect(await queues.advanceSchedule(queue, 'r', running.nextId)).toBe('stale');
    await redis.del(keys().active, keys().job(running.nextId));
  });

  it('answers a repeated upsert request with its first reply', async () => {
    const ctx = queues.context(queue);
    const definition = JSON.stringify({
      spec: { everyMs: 1000 },
      options: { missed: 'once', missedAfterMs: 60000 },
      template: { data: 'null' },
    });
    const [id, other] = ['JOB0000000000A', 'JOB0000000000B'];
    const call = { key: 'replay', definition, id, runAtMs: Date.now() + 60_000 };
    const first = await upsertScheduleScript(ctx, call, 'req-replay-1');
    const repeat = await upsertScheduleScript(ctx, { ...call, id: other }, 'req-replay-1');
    expect(repeat).toEqual(first);
    expect(first.outcome).toBe('created');
    expect(await waiting()).toEqual([id]);
  });
});
