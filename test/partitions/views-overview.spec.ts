import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import { MAX_PARTITIONS, QueueService } from '@app/echomq/internal';
import { OVERVIEW_PHYSICAL_AT_ONCE } from '../../apps/api/src/dashboard/overview/read-queues';
import { startDashboardApi, until, type DashboardApi } from '../dashboard/server/support/dashboard-api';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

interface Overview {
  queuesTotal: number;
  queues: { queue: string; counts: { pending: number } }[];
}

/** Of a queue of MAX_PARTITIONS partitions: each partition and the queue itself. */
const PHYSICAL = MAX_PARTITIONS + 1;
/** More such queues than one group of OVERVIEW_PHYSICAL_AT_ONCE physical queues holds. */
const QUEUES = Math.floor(OVERVIEW_PHYSICAL_AT_ONCE / PHYSICAL) + 2;

/**
 * The overview on queues of many partitions: each is read over all of them, so the queues are
 * read a group at a time, weighed by their physical queues, and shown as if read at once.
 */
describe('the dashboard overview reads partitioned queues a bounded group at a time', () => {
  let api: DashboardApi;
  let producer: INestApplication;
  const names = Array.from({ length: QUEUES }, () => uniqueQueue('wide'));

  beforeAll(async () => {
    // One reading per GET: no second one starts while the first is counted.
    api = await startDashboardApi({ EMQ_DASHBOARD_REFRESH_MS: '60000' });
    producer = await bootApp([], {
      keyPrefix: api.prefix,
      startProcessors: false,
      queues: Object.fromEntries(names.map((queue) => [queue, { partitions: MAX_PARTITIONS }])),
    });
    // Each first use records the count in the partitions registry, before the api reads it.
    for (const queue of names) await producer.get(QueueService).enqueue(queue, { queue });
  });
  afterAll(async () => {
    await producer.close();
    await api.close();
  });

  it('never reads more than OVERVIEW_PHYSICAL_AT_ONCE physical queues at once, and shows every queue', async () => {
    // Each queue's reading starts with its depths: the depths reads in flight are its queues in flight.
    const read = api.queues.counts.bind(api.queues);
    let inFlight = 0;
    let mostInFlight = 0;
    const counts = jest.spyOn(api.queues, 'counts').mockImplementation(async (queue) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      try {
        return await read(queue);
      } finally {
        inFlight -= 1;
      }
    });
    try {
      // The api learns the layouts from the registry: until then each queue weighs one.
      await until('the api to know the layouts', async () =>
        (await Promise.all(names.map((queue) => api.queues.partitionLayout(queue)))).every(
          (layout) => layout.physical.length === PHYSICAL,
        )
          ? true
          : undefined,
      );
      const before = counts.mock.calls.length;
      const overview = (await request(api.url).get('/dashboard/api/overview').expect(200)).body as Overview;
      expect(counts.mock.calls.length - before).toBe(QUEUES);
      // A group holds as many whole queues as fit: all of them at once would be QUEUES.
      expect(mostInFlight).toBe(Math.floor(OVERVIEW_PHYSICAL_AT_ONCE / PHYSICAL));
      expect(overview.queuesTotal).toBe(QUEUES);
      expect(overview.queues.map(({ queue }) => queue)).toEqual([...names].sort());
      expect(overview.queues.every(({ counts: depths }) => depths.pending === 1)).toBe(true);
    } finally {
      counts.mockRestore();
    }
  });
});
