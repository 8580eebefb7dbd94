import type { INestApplication } from '@nestjs/common';
import { QueueService, partitionTagOf } from '@app/echomq/internal';
import { bucketOf } from '@app/echomq/queue/partitions/partition-routing';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

const HOUR = 3_600_000;

/** Schedules of a partitioned queue: one schedule, one next occurrence, in one partition. */
describe('schedules of a partitioned queue', () => {
  const queue = uniqueQueue('sched');
  const many = uniqueQueue('sched-many');
  let three: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    three = await bootApp([], { queues: { [queue]: { partitions: 3 }, [many]: { partitions: 3 } } });
    queues = three.get(QueueService);
  });
  afterAll(async () => {
    await three.close();
  });

  it('makes one occurrence in the whole queue, in the partition its key hashes to; upserting again changes nothing', async () => {
    const created = await queues.upsertSchedule(queue, 'hourly', { everyMs: HOUR }, { data: { report: 1 } });
    expect(created.outcome).toBe('created');
    const home = bucketOf('schedule:hourly', 3);
    expect(partitionTagOf(created.nextId)).toBe(home);
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 1, dead: 0 });
    expect((await queues.counts(`${queue}#${home}`)).schedule).toBe(1);
    expect(await queues.getJob(queue, created.nextId)).toMatchObject({
      state: 'schedule',
      data: { report: 1 },
    });

    const again = await queues.upsertSchedule(queue, 'hourly', { everyMs: HOUR }, { data: { report: 1 } });
    expect(again).toEqual({ ...created, outcome: 'unchanged' });
    expect((await queues.counts(queue)).schedule).toBe(1);
    const changed = await queues.upsertSchedule(queue, 'hourly', { everyMs: HOUR }, { data: { report: 2 } });
    expect(changed.outcome).toBe('updated');
    expect(partitionTagOf(changed.nextId)).toBe(home);
    expect((await queues.counts(queue)).schedule).toBe(1);

    expect((await queues.getSchedule(queue, 'hourly'))?.nextId).toBe(changed.nextId);
    expect((await queues.listSchedules(queue)).map((view) => view.key)).toEqual(['hourly']);
  });

  it('lists schedules of every partition by key, a full page by default, and pages with after', async () => {
    const keys = Array.from({ length: 8 }, (_, n) => `job-${n}`);
    for (const key of keys) await queues.upsertSchedule(many, key, { everyMs: HOUR });
    // The keys live in more than one partition.
    expect(new Set(keys.map((key) => bucketOf(`schedule:${key}`, 3))).size).toBeGreaterThan(1);
    expect((await queues.listSchedules(many)).map((view) => view.key)).toEqual(keys);
    const paged: string[] = [];
    let after: string | undefined;
    for (let guard = 0; guard < 20; guard++) {
      const page = await queues.listSchedules(many, { limit: 3, ...(after ? { after } : {}) });
      if (page.length === 0) break;
      paged.push(...page.map((view) => view.key));
      after = page[page.length - 1].key;
    }
    expect(paged).toEqual(keys);
    expect((await queues.counts(many)).schedule).toBe(keys.length);
  });

  it('keeps one schedule when the partition count changes: upserting the same key finds where it lives', async () => {
    const key = 'nightly';
    const created = await queues.upsertSchedule(queue, key, { everyMs: HOUR }, { data: 'n' });
    const was = partitionTagOf(created.nextId);
    // A key whose partition differs between three and five partitions shows the lookup, not luck.
    expect(bucketOf(`schedule:${key}`, 5)).not.toBe(was);
    const five = await bootApp([], { queues: { [queue]: { partitions: 5 } } });
    try {
      const wider = five.get(QueueService);
      expect((await wider.partitionLayout(queue)).count).toBe(5);
      const again = await wider.upsertSchedule(queue, key, { everyMs: HOUR }, { data: 'n' });
      expect(again).toEqual({ ...created, outcome: 'unchanged' });
      const changed = await wider.upsertSchedule(queue, key, { everyMs: HOUR }, { data: 'changed' });
      expect(changed.outcome).toBe('updated');
      expect(partitionTagOf(changed.nextId)).toBe(was);
      expect((await wider.listSchedules(queue)).filter((view) => view.key === key)).toHaveLength(1);
      expect((await wider.getSchedule(queue, key))?.template.data).toBe('changed');

      expect(await wider.removeSchedule(queue, key)).toBe(true);
      expect(await wider.getSchedule(queue, key)).toBeUndefined();
      expect(await queues.getSchedule(queue, key)).toBeUndefined();
      expect(await wider.removeSchedule(queue, key)).toBe(false);
      expect(await wider.getJob(queue, changed.nextId)).toBeUndefined();
    } finally {
      await five.close();
    }
  });
});
