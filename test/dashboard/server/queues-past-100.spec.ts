import request from 'supertest';
import { startDashboardApi, until, type DashboardApi } from './support/dashboard-api';
import { SseReader } from './support/sse';

interface OverviewMessage {
  queuesTotal: number;
  queues: { queue: string }[];
}
interface JobMessage {
  queue: string;
  type: string;
  id: string | null;
}

/** The overview reads the first 100 queues by name; a page showing any other still gets its events. */
describe('dashboard with more than 100 queues', () => {
  let api: DashboardApi;
  // On the api's own key prefix, so its registry holds exactly these.
  const names = Array.from({ length: 101 }, (_, i) => `q${String(i).padStart(3, '0')}`);
  const last = names[100];

  beforeAll(async () => {
    api = await startDashboardApi();
    await Promise.all(names.map((queue) => api.queues.enqueue(queue, { queue })));
  });
  afterAll(async () => {
    await api.close();
  });

  it('lists the first 100 by name in the overview and counts them all', async () => {
    const { body } = await request(api.url).get('/dashboard/api/overview').expect(200);
    const overview = body as OverviewMessage;
    expect(overview.queuesTotal).toBe(101);
    expect(overview.queues.map(({ queue }) => queue)).toEqual(names.slice(0, 100));
  });

  it('follows the 101st queue for a page that shows it, and streams its job events', async () => {
    const stream = await SseReader.open(api.url, `/dashboard/api/events?queue=${last}`);
    try {
      const overview = await stream.next<OverviewMessage>('overview');
      expect(overview.queues.some(({ queue }) => queue === last)).toBe(false);
      await until('the hub to follow it', async () => ((await api.hub.following(last)) ? true : undefined));
      expect(api.hub.followedQueues).toEqual([last]);
      const id = await api.queues.enqueue(last, { n: 1 });
      const event = await stream.next<JobMessage>('job', (m) => m.id === id);
      expect(event).toEqual({ queue: last, type: 'enqueued', id });
      // Its own routes serve what the page reads for it instead of the overview.
      const detail = await request(api.url).get(`/queues/${last}`).expect(200);
      expect(detail.body).toMatchObject({ queue: last, paused: false, counts: { pending: 2 } });
      await request(api.url).get(`/queues/${last}/lanes`).expect(200);
    } finally {
      stream.close();
    }
    await until('the page to close', () => (api.hub.pageCount === 0 ? true : undefined));
    expect(api.hub.followedQueues).toEqual([]);
  });
});
