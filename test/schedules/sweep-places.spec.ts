import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, claimJobs, failJob, promoteDue, queueKeys } from '@app/echomq/internal';
import { serverNowMs } from '../support/assertions';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { makeOverdue } from './support/downtime';
import { expectScheduleInvariants, scheduleState } from './support/schedule-invariants';

const HOUR = 3_600_000;

/**
 * The reapers' sweep against next occurrences that left the schedule set without starting
 * (promoted into a backlog) or that sit in it only to retry (claimed before, fast path lost).
 */
describe('schedules: the sweep by where the next occurrence is', () => {
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
    queue = uniqueQueue('sched-sweep');
  });
  afterEach(async () => expectScheduleInvariants(redis, queue));

  const keys = () => queueKeys(queue);
  const claimOne = async () =>
    (await claimJobs(queues.context(queue), { count: 1, leaseMs: 30_000, claimantPrefix: 'sweep' })).jobs;

  it('leaves a promoted, unclaimed occurrence alone, so removeSchedule still reaches it (no orphan runs later)', async () => {
    const { nextId } = await queues.upsertSchedule(queue, 'backlog', { everyMs: 60_000 }, { lane: 'l1' });
    // Nobody claims (a paused queue, busy workers): the reaper promotes the due run, then sweeps.
    for (let tick = 0; tick < 3; tick++) {
      if (tick === 0) await makeOverdue(redis, queue, nextId, 10);
      await promoteDue(queues.context(queue), 10);
      expect(await queues.sweepSchedules(queue, 10)).toMatchObject({ advanced: 0, skipped: 0 });
    }
    expect(await queues.advanceSchedule(queue, 'backlog', nextId)).toBe('stale');
    expect((await queues.getSchedule(queue, 'backlog'))!.nextId).toBe(nextId);
    expect((await scheduleState(redis, queue)).unstarted.get('backlog')).toEqual([nextId]);

    expect(await queues.removeSchedule(queue, 'backlog')).toBe(true);
    expect(await redis.exists(keys().pendingOf('l1'), keys().job(nextId))).toBe(0);
  });

  it('once claimed, the sweep advances it (the fast path lost)', async () => {
    const { nextId } = await queues.upsertSchedule(queue, 'lost-fast-path', { everyMs: 60_000 });
    const planned = await makeOverdue(redis, queue, nextId, 10);
    await claimOne();
    expect(await queues.sweepSchedules(queue, 10)).toMatchObject({ advanced: 1 });
    expect((await queues.getSchedule(queue, 'lost-fast-path'))!.nextRunAt!.getTime()).toBe(planned + 60_000);
    await redis.del(keys().active, keys().job(nextId));
  });

  it('a cron pattern with no run left ends its schedule once the last run was claimed, so no sweep looks at it again', async () => {
    const year = new Date(await serverNowMs(redis)).getUTCFullYear() + 1;
    // Seconds, minutes, hours, day, month, weekday, year: one run, on 1 January next year.
    const { nextId, nextRunAt } = await queues.upsertSchedule(queue, 'once', { cron: `0 0 0 1 1 * ${year}` });
    expect(nextRunAt.getTime()).toBe(Date.UTC(year, 0, 1));
    // That run comes due (its planned run-at stays the slot) and is claimed; its fast path is lost.
    await redis.zadd(keys().schedule, 'XX', 1, nextId);
    await claimOne();
    const mark = (await redis.xrevrange(keys().events, '+', '-', 'COUNT', 1))[0][0];
    await queues.sweepSchedules(queue, 10);
    expect(await queues.getSchedule(queue, 'once')).toBeUndefined();
    expect(await redis.exists(keys().schedulers, keys().schedulerNext)).toBe(0);
    const events = (await redis.xrange(keys().events, `(${mark}`, '+')).map(([, fields]) => fields.join(' '));
    expect(events).toEqual(['type schedule-removed ids  key once reason ended']);
    expect(await queues.advanceSchedule(queue, 'once', nextId)).toBe('stale');
    await redis.del(keys().active, keys().job(nextId));
  });

  it('an occurrence waiting out a retry backoff counts as claimed: advanced from, never dropped or replaced', async () => {
    const ctx = queues.context(queue);
    const spec = { everyMs: HOUR, missed: 'skip' as const, missedAfterMs: 1_000 };
    const { nextId } = await queues.upsertSchedule(queue, 'retry', spec, { data: 1, maxAttempts: 3 });
    await makeOverdue(redis, queue, nextId, 10);
    // Claimed, its advance lost, and its run failed into a backoff: back in schedule with a = 1.
    const [claim] = await claimOne();
    await failJob(ctx, claim, { error: 'again', backoffMs: 60_000, unrecoverable: false });
    expect(await redis.hget(keys().job(nextId), 'a')).toBe('1');

    // A template change leaves the retry alone (its advance uses the new definition).
    const changed = await queues.upsertSchedule(queue, 'retry', spec, { data: 2, maxAttempts: 3 });
    expect(changed).toMatchObject({ outcome: 'updated', nextId });
    expect(await redis.hget(keys().job(nextId), 'd')).toBe('1');

    // The retry is overdue by far more than missedAfterMs: 'skip' must not drop a run that started.
    await redis.zadd(keys().schedule, 'XX', (await serverNowMs(redis)) - 10 * 60_000, nextId);
    expect(await queues.sweepSchedules(queue, 10)).toMatchObject({ advanced: 1, skipped: 0 });
    const view = (await queues.getSchedule(queue, 'retry'))!;
    expect(view.nextId).not.toBe(nextId);
    expect(await redis.hget(keys().job(view.nextId!), 'd')).toBe('2');
    expect(await redis.zscore(keys().schedule, nextId)).not.toBeNull();
    expect(await redis.hget(keys().job(nextId), 'a')).toBe('1');
  });
});
