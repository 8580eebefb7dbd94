import type { INestApplication } from '@nestjs/common';
import { QueueService, partitionTagOf } from '@app/echomq/internal';
import { bucketOf } from '@app/echomq/queue/partitions/partition-routing';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

const HOUR = 3_600_000;
const PARTITIONS = 4;

/** A key whose own hash names another partition than `lane`'s, so the test shows the lane decided. */
function keyAwayFrom(lane: string, prefix = 'report'): string {
  let key = `${prefix}-0`;
  for (let n = 1; bucketOf(`schedule:${key}`, PARTITIONS) === bucketOf(`lane:${lane}`, PARTITIONS); n++)
    key = `${prefix}-${n}`;
  return key;
}

describe("a schedule's partition when its template names a lane", () => {
  const queue = uniqueQueue('sched-lane');
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    app = await bootApp([], { queues: { [queue]: { partitions: PARTITIONS } } });
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    await app.close();
  });

  it("puts a new schedule in its lane's partition, with the lane's other jobs", async () => {
    const lane = 'tenant-a';
    const key = keyAwayFrom(lane);
    const created = await queues.upsertSchedule(queue, key, { everyMs: HOUR }, { data: 1, lane });
    const ordinary = await queues.enqueue(queue, 2, { lane });
    expect(partitionTagOf(created.nextId)).toBe(bucketOf(`lane:${lane}`, PARTITIONS));
    expect(partitionTagOf(created.nextId)).toBe(partitionTagOf(ordinary));
    const home = `${queue}#${partitionTagOf(ordinary)}`;
    expect((await queues.counts(home)).schedule).toBe(1);
    expect((await queues.getSchedule(home, key))?.template.lane).toBe(lane);
  });

  it('puts a schedule without a lane, or in the default lane, where its key hashes to', async () => {
    const key = keyAwayFrom('tenant-b');
    const bare = await queues.upsertSchedule(queue, key, { everyMs: HOUR }, { data: 'bare' });
    expect(partitionTagOf(bare.nextId)).toBe(bucketOf(`schedule:${key}`, PARTITIONS));
    const other = keyAwayFrom('default', 'in-default');
    const inDefault = await queues.upsertSchedule(queue, other, { everyMs: HOUR }, { lane: 'default' });
    expect(partitionTagOf(inDefault.nextId)).toBe(bucketOf(`schedule:${other}`, PARTITIONS));
  });

  it('keeps an existing schedule where it is when an upsert changes its lane', async () => {
    const lane = 'tenant-c';
    const key = keyAwayFrom(lane);
    const created = await queues.upsertSchedule(queue, key, { everyMs: HOUR }, { data: 'x' });
    const home = partitionTagOf(created.nextId);
    expect(home).toBe(bucketOf(`schedule:${key}`, PARTITIONS));
    const moved = await queues.upsertSchedule(queue, key, { everyMs: HOUR }, { data: 'x', lane });
    expect(moved.outcome).toBe('updated');
    expect(partitionTagOf(moved.nextId)).toBe(home);
    expect((await queues.listSchedules(queue)).filter((view) => view.key === key)).toHaveLength(1);
  });
});
