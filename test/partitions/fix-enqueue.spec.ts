import type { INestApplication } from '@nestjs/common';
import { z } from 'zod';
import {
  DATA_FORMAT,
  DataFormatError,
  JobDataInvalidError,
  QueueService,
  defineQueue,
  partitionTagOf,
  queueKeys,
  type JobToEnqueue,
} from '@app/echomq/internal';
import { bucketOf } from '@app/echomq/queue/partitions/partition-routing';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { TestTracing } from '../tracing/support/otel';
import { usePartitionedApp } from './support/partitioned-app';

const PARTITIONS = 3;

/** Two lanes whose jobs go to different partitions. */
function lanesApart(): [string, string] {
  const first = 'lane-a';
  let second = 'lane-b0';
  for (let n = 1; bucketOf(`lane:${second}`, PARTITIONS) === bucketOf(`lane:${first}`, PARTITIONS); n++)
    second = `lane-b${n}`;
  return [first, second];
}

describe('an enqueueMany split over partitions', () => {
  const suite = usePartitionedApp({ defaults: { partitions: PARTITIONS } });
  const [laneA, laneB] = lanesApart();

  it("names a refused item by its index in the caller's batch, and writes nothing", async () => {
    const Orders = defineQueue(uniqueQueue('typed-many'), { data: z.object({ sku: z.string() }) });
    suite.queues.queue(Orders);
    // Data as an untyped caller (JSON from a request) may send it.
    const batch: JobToEnqueue<unknown>[] = [
      { data: { sku: 'a' }, lane: laneA },
      { data: { sku: 'b' }, lane: laneB },
      { data: { sku: 3 }, lane: laneB },
    ];
    const refusal = await suite.queues.enqueueMany(Orders.name, batch).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(JobDataInvalidError);
    expect(refusal).toMatchObject({ index: 2 });
    expect((refusal as Error).message).toContain('(job 2)');
    expect((await suite.queues.counts(Orders.name)).pending).toBe(0);
    // The same item alone in its group names the same index.
    const alone = [batch[0], batch[1], { data: { sku: 4 }, lane: laneA }, batch[1]];
    await expect(suite.queues.enqueueMany(Orders.name, alone)).rejects.toMatchObject({ index: 2 });
  });

  it("registers every partition it writes to before it writes to any: one's refusal writes no job anywhere", async () => {
    const queue = uniqueQueue('refused-part');
    const refusing = `${queue}#${bucketOf(`lane:${laneB}`, PARTITIONS)}`;
    // A newer release recorded a data format this code does not know in one partition.
    await suite.redis.set(queueKeys(refusing).format, String(DATA_FORMAT + 1));
    const batch = [
      { data: 1, lane: laneA },
      { data: 2, lane: laneB },
    ];
    await expect(suite.queues.enqueueMany(queue, batch)).rejects.toBeInstanceOf(DataFormatError);
    // A later job of the other partition lands after anything the refused call had sent there.
    const later = await suite.queues.enqueue(queue, 3, { lane: laneA });
    const other = `${queue}#${partitionTagOf(later)}`;
    expect(await suite.redis.zcard(queueKeys(other).pendingOf(laneA))).toBe(1);
    expect((await suite.queues.counts(queue)).pending).toBe(1);
  });
});

describe('tracing an enqueue through a partition named directly', () => {
  let tracing: TestTracing;
  let app: INestApplication;

  beforeAll(async () => {
    tracing = TestTracing.install();
    app = await bootApp([], { tracing: true, defaults: { partitions: PARTITIONS } });
  });
  afterAll(async () => {
    await app.close();
    await tracing.uninstall();
  });

  it('opens its publish span under the queue name, as enqueue does', async () => {
    const queue = uniqueQueue('traced-direct');
    const queues = app.get(QueueService);
    const ids = await queues.enqueueMany(`${queue}#1`, [{ data: 1 }, { data: 2 }]);
    await queues.enqueue(`${queue}#2`, 3);
    expect(tracing.named(`${queue} publish`)).toHaveLength(2);
    expect(tracing.named(`${queue}#1 publish`)).toEqual([]);
    expect(tracing.named(`${queue} create`).map((span) => span.attributes['messaging.message.id'])).toEqual(
      expect.arrayContaining(ids),
    );
  });
});
