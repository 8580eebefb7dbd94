import { completeJobs, RECENT_COMPLETED_MAX } from '@app/echomq/internal';
import request from 'supertest';
import { uniqueQueue } from '../../support/redis';
import { claim, startDashboardApi, until, type DashboardApi } from './support/dashboard-api';
import { SseReader } from './support/sse';

interface Page {
  jobs: { id: string }[];
  next: string | null;
}
interface JobMessage {
  id: string | null;
}

/** What job listings cost Redis: bounded per request, and shared between pages where that is cheap. */
describe('dashboard job list cost', () => {
  let api: DashboardApi;

  beforeAll(async () => {
    api = await startDashboardApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const list = async (queue: string, query: Record<string, string> = {}): Promise<Page> =>
    (await request(api.url).get(`/dashboard/api/queues/${queue}/jobs`).query(query).expect(200)).body as Page;

  it('reads the event stream once for a filtered completed list: the walk of one recentCompleted', async () => {
    const queue = uniqueQueue('walk');
    const ctx = api.queues.context(queue);
    // 1,200 completions, one stream entry each (as workers settle them), beside enqueue and claim entries.
    for (let batch = 0; batch < 12; batch++) {
      await api.queues.enqueueMany(
        queue,
        Array.from({ length: 100 }, (_, i) => ({ name: 'hay', data: i })),
      );
      const jobs = await claim(api, queue, 100);
      await Promise.all(jobs.map((job) => completeJobs(ctx, [{ claim: job, result: '' }], 0)));
    }
    const xrevrange = jest.spyOn(ctx.redis, 'xrevrange');
    try {
      await api.queues.recentCompleted(queue, { limit: RECENT_COMPLETED_MAX });
      const oneWalk = xrevrange.mock.calls.length;
      xrevrange.mockClear();
      const page = await list(queue, { state: 'completed', name: 'needle' });
      expect(page.jobs).toEqual([]);
      expect(xrevrange.mock.calls).toHaveLength(oneWalk);
      // 1,000 completions in entries of 200: about five pages of the stream, not one walk per chunk.
      expect(oneWalk).toBeLessThanOrEqual(Math.ceil(RECENT_COMPLETED_MAX / 200) + 1);
    } finally {
      xrevrange.mockRestore();
    }
  }, 60_000);

  it('shares one read of a first page between the pages of a followed queue, until an event changes it', async () => {
    const queue = uniqueQueue('shared');
    const [first] = await api.queues.enqueueMany(queue, [{ data: 1 }]);
    const stream = await SseReader.open(api.url, `/dashboard/api/events?queue=${queue}`);
    const browse = jest.spyOn(api.queues, 'browse');
    try {
      await until('the hub to follow it', () => (api.hub.isLive(queue) ? true : undefined));
      const pages = await Promise.all(Array.from({ length: 8 }, () => list(queue)));
      expect(pages.map((page) => page.jobs.map((job) => job.id))).toEqual(Array(8).fill([first]));
      expect(browse.mock.calls.filter(([name]) => name === queue)).toHaveLength(1);
      // An enqueue: by the time a page is told of it, the shared page is gone and it reads afresh.
      const [second] = await api.queues.enqueueMany(queue, [{ data: 2 }]);
      await stream.next<JobMessage>('job', (m) => m.id === second);
      expect((await list(queue)).jobs.map((job) => job.id)).toEqual([second, first]);
      expect(browse.mock.calls.filter(([name]) => name === queue)).toHaveLength(2);
    } finally {
      stream.close();
      browse.mockRestore();
    }
  });

  it('reads straight from Redis for a queue no open page follows', async () => {
    const queue = uniqueQueue('direct');
    const [id] = await api.queues.enqueueMany(queue, [{ data: 1 }]);
    const browse = jest.spyOn(api.queues, 'browse');
    try {
      await list(queue);
      await api.queues.remove(queue, id);
      // No event reaches this process for it, so nothing was shared that could now be stale.
      expect((await list(queue)).jobs).toEqual([]);
      expect(browse.mock.calls.filter(([name]) => name === queue)).toHaveLength(2);
    } finally {
      browse.mockRestore();
    }
  });
});
