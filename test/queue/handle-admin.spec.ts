import type { INestApplication } from '@nestjs/common';
import { z } from 'zod';
import { defineQueue, JobDataInvalidError, QueueService } from '@app/echomq';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

/**
 * A typed handle carries the queue's administration too (schedules, job control, history),
 * with the queue bound and the definition's data schema checked where new data comes in.
 */
const redis = connect();
let app: INestApplication;

beforeAll(async () => {
  app = await bootApp([]);
});
afterAll(async () => {
  await app.close();
  await redis.quit();
});

function handleOf(queue: string) {
  const Reports = defineQueue(queue, { data: z.object({ day: z.string() }) });
  return app.get(QueueService).queue(Reports);
}

describe('a typed handle administers its own queue', () => {
  it('upserts, reads and removes a schedule, checking the template against the data schema', async () => {
    const queue = uniqueQueue('handle-schedules');
    const reports = handleOf(queue);
    const created = await reports.upsertSchedule(
      'daily',
      { cron: '0 6 * * *', tz: 'UTC' },
      { data: { day: 'today' } },
    );
    expect(created.outcome).toBe('created');
    expect((await reports.getSchedule('daily'))?.nextId).toBe(created.nextId);
    expect((await reports.listSchedules()).map((view) => view.key)).toEqual(['daily']);
    await expect(
      reports.upsertSchedule('bad', { everyMs: 1_000 }, { data: { day: 42 } as never }),
    ).rejects.toBeInstanceOf(JobDataInvalidError);
    expect(await reports.getSchedule('bad')).toBeUndefined();
    expect(await reports.removeSchedule('daily')).toBe(true);
    expect(await reports.counts()).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });

  it('updates, promotes and drains through the handle', async () => {
    const queue = uniqueQueue('handle-control');
    const reports = handleOf(queue);
    const later = await reports.enqueue({ day: 'mon' }, { delayMs: 3_600_000 });
    await reports.enqueue({ day: 'tue' });
    expect(await reports.update(later, { data: { day: 'wed' } })).toBe('schedule');
    expect((await reports.getJob(later))?.data).toEqual({ day: 'wed' });
    await reports.promote(later);
    expect((await reports.getJob(later))?.state).toBe('pending');
    expect(await reports.drain()).toBe(2);
    expect(await reports.counts()).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await reports.recentCompleted()).toEqual([]);
  });
});
