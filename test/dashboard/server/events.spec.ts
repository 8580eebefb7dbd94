import request from 'supertest';
import { uniqueQueue } from '../../support/redis';
import { completeSome, startDashboardApi, until, type DashboardApi } from './support/dashboard-api';
import { SseReader } from './support/sse';

interface JobMessage {
  queue: string;
  type: string;
  id: string | null;
}
interface OverviewMessage {
  at: string;
  queues: { queue: string; counts: { pending: number } }[];
}

describe('dashboard event stream', () => {
  let api: DashboardApi;
  const open: SseReader[] = [];

  beforeAll(async () => {
    api = await startDashboardApi();
  });
  afterEach(async () => {
    for (const stream of open.splice(0)) stream.close();
    await until('every page to close', () => (api.hub.pageCount === 0 ? true : undefined));
  });
  afterAll(async () => {
    await api.close();
  });

  /** A page's stream: the overview's (no queue), or a queue view's, which also takes that queue's job events. */
  const events = async (queue?: string): Promise<SseReader> => {
    const query = queue === undefined ? '' : `?queue=${encodeURIComponent(queue)}`;
    const stream = await SseReader.open(api.url, `/dashboard/api/events${query}`);
    open.push(stream);
    return stream;
  };
  /** Waits until the hub's subscription to the queue is live: events from then on reach the pages. */
  const followed = (queue: string) =>
    until('the hub to follow the queue', async () => ((await api.hub.following(queue)) ? true : undefined));
  const pendingOf = (queue: string) => (o: OverviewMessage) =>
    o.queues.find((q) => q.queue === queue)?.counts.pending;

  it('streams text/event-stream: a reconnect delay, then the overview as it is refreshed', async () => {
    const queue = uniqueQueue('sse');
    await api.queues.enqueue(queue, {});
    const stream = await events();
    expect(stream.status).toBe(200);
    expect(stream.header('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.header('cache-control')).toBe('no-cache, no-transform');
    await stream.next<OverviewMessage>('overview', (o) => pendingOf(queue)(o) === 1);
    expect(stream.retry).toBe(3000);
    await api.queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
    await stream.next<OverviewMessage>('overview', (o) => pendingOf(queue)(o) === 3);
  });

  it('pushes job events as jobs are enqueued, claimed and completed', async () => {
    const queue = uniqueQueue('jobs');
    const stream = await events(queue);
    await followed(queue);
    const ids = await api.queues.enqueueMany(queue, [{ data: 'a' }, { data: 'b' }]);
    await stream.next<JobMessage>('job', (m) => m.type === 'enqueued' && m.id === ids[1]);
    const done = await completeSome(api, queue, 3);
    for (const id of done) {
      await stream.next<JobMessage>('job', (m) => m.type === 'claimed' && m.id === id);
      await stream.next<JobMessage>('job', (m) => m.type === 'completed' && m.id === id);
    }
    expect(stream.data<JobMessage>('job').every((m) => m.queue === queue)).toBe(true);
    // Lease heartbeats are not forwarded.
    expect(stream.data<JobMessage>('job').some((m) => m.type === 'extended')).toBe(false);
  });

  it('sends job events about no single job with id null', async () => {
    const queue = uniqueQueue('lanes');
    await api.queues.enqueue(queue, {}, { lane: 'tenant-a' });
    const stream = await events(queue);
    await followed(queue);
    const probe = await api.queues.enqueue(queue, {});
    await stream.next<JobMessage>('job', (m) => m.id === probe);
    await api.queues.pauseLane(queue, 'tenant-a');
    const paused = await stream.next<JobMessage>('job', (m) => m.type === 'lane-paused');
    expect(paused).toEqual({ queue, type: 'lane-paused', id: null });
  });

  it('serves many pages from one reading per refresh and one subscription per queue', async () => {
    const queue = uniqueQueue('many');
    await api.queues.enqueue(queue, {});
    const counts = jest.spyOn(api.queues, 'counts');
    const subscribe = jest.spyOn(api.queues, 'subscribe');
    /** Opens `n` pages, lets the first see five refreshes, closes them all; returns the readings made. */
    const phase = async (n: number): Promise<number> => {
      const before = api.sampler.readCount;
      const pages = await Promise.all(Array.from({ length: n }, () => events(queue)));
      await until('five overviews', () => (pages[0].data('overview').length >= 6 ? true : undefined));
      for (const page of pages) page.close();
      await until('every page to close', () => (api.hub.pageCount === 0 ? true : undefined));
      await until('the sampler to stop', () => (api.sampler.isIdle ? true : undefined));
      return api.sampler.readCount - before;
    };
    const alone = await phase(1);
    const together = await phase(8);
    // The same refreshes cost the same readings with one page or eight (readings per page would be ~8x).
    expect(alone).toBeGreaterThanOrEqual(5);
    expect(together).toBeLessThan(alone * 2 + 2);
    // One set of reads per reading, whoever watches: one counts() of the queue each time.
    expect(counts.mock.calls.filter(([name]) => name === queue)).toHaveLength(alone + together);
    // One subscription per followed queue per opening of the hub, however many pages.
    expect(subscribe.mock.calls.filter(([name]) => name === queue)).toHaveLength(2);
    counts.mockRestore();
    subscribe.mockRestore();
  });

  it('cleans up a page that disconnects, and stops following when the last one leaves', async () => {
    const queue = uniqueQueue('bye');
    await api.queues.enqueue(queue, {});
    const first = await events(queue);
    const second = await events(queue);
    await until('two pages', () => (api.hub.pageCount === 2 ? true : undefined));
    await followed(queue);
    first.close();
    await until('one page', () => (api.hub.pageCount === 1 ? true : undefined));
    expect(api.hub.followedQueues).toContain(queue);
    second.close();
    await until('no page', () => (api.hub.pageCount === 0 ? true : undefined));
    expect(api.hub.followedQueues).toEqual([]);
    await until('the sampler to stop', () => (api.sampler.isIdle ? true : undefined));
  });

  it('drops what a page cannot take in one burst and says lagged once', async () => {
    const queue = uniqueQueue('flood');
    const stream = await events(queue);
    await followed(queue);
    const probe = await api.queues.enqueue(queue, {});
    await stream.next<JobMessage>('job', (m) => m.id === probe);
    const before = stream.data<JobMessage>('job').length;
    const ids = await api.queues.enqueueMany(
      queue,
      Array.from({ length: 500 }, (_, i) => ({ data: i })),
    );
    const lagged = await stream.next<{ dropped: number }>('lagged');
    const received = stream.data<JobMessage>('job').slice(before);
    expect(lagged.dropped).toBeGreaterThan(0);
    expect(received.length + lagged.dropped).toBe(ids.length);
    expect(received.length).toBeLessThanOrEqual(200);
    expect(stream.data('lagged')).toHaveLength(1);
  });

  it('ends open streams when the api closes', async () => {
    const own = await startDashboardApi();
    const stream = await SseReader.open(own.url, '/dashboard/api/events');
    await stream.next('overview');
    await own.close();
    await until('the stream to end', () => (stream.closed ? true : undefined));
  });

  it('answers GET /dashboard/api/overview with the JSON the stream sends', async () => {
    const queue = uniqueQueue('same');
    await api.queues.enqueue(queue, {});
    const res = await request(api.url).get('/dashboard/api/overview').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual([
      'at',
      'bucketMs',
      'queues',
      'queuesTotal',
      'refreshMs',
      'seq',
    ]);
  });

  it('sends the overview page no job events, and follows only the queues pages show', async () => {
    const shown = uniqueQueue('shown');
    const other = uniqueQueue('other');
    await api.queues.enqueueMany(other, [{ data: 0 }]);
    const overviewPage = await events();
    const queuePage = await events(shown);
    await followed(shown);
    expect(api.hub.followedQueues).toEqual([shown]);
    const [mine] = await api.queues.enqueueMany(shown, [{ data: 1 }]);
    await api.queues.enqueueMany(other, [{ data: 2 }]);
    await queuePage.next<JobMessage>('job', (m) => m.id === mine);
    // Both pages had the same bursts; the overview page's held overviews only.
    await overviewPage.next<OverviewMessage>('overview', (o) => pendingOf(shown)(o) === 1);
    expect(overviewPage.data('job')).toEqual([]);
    expect(queuePage.data<JobMessage>('job').every((m) => m.queue === shown)).toBe(true);
  });

  it('opens a stream with the latest overview only when it is fresh, else with the next reading', async () => {
    const first = await events();
    const { seq } = await first.next<OverviewMessage & { seq: number }>('overview');
    first.close();
    await until('the sampler to stop', () =>
      api.hub.pageCount === 0 && api.sampler.isIdle ? true : undefined,
    );
    // Older than two intervals: a new page would show stale depths under an old time.
    await until('the sample to age', () =>
      api.sampler.latestSample(2 * api.sampler.refreshMs) === undefined ? true : undefined,
    );
    const second = await events();
    const opening = await second.next<OverviewMessage & { seq: number }>('overview');
    expect(opening.seq).toBeGreaterThan(seq);
  });

  it.each([
    ['a malformed queue', '?queue=bad%20name', 'INVALID_QUEUE_NAME'],
    ['two queues', '?queue=a&queue=b', undefined],
    ['an unknown parameter', '?queues=a', undefined],
  ])('refuses a stream for %s with a 400 JSON body', async (_label, query, code) => {
    const res = await request(api.url).get(`/dashboard/api/events${query}`).expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toMatchObject({ statusCode: 400, ...(code === undefined ? {} : { code }) });
    expect(api.hub.pageCount).toBe(0);
  });

  it('refuses new streams with a 503 JSON body once the hub is destroyed', async () => {
    const own = await startDashboardApi();
    try {
      const stream = await SseReader.open(own.url, '/dashboard/api/events');
      await stream.next('overview');
      own.hub.onModuleDestroy();
      await until('the open stream to end', () => (stream.closed ? true : undefined));
      const res = await request(own.url).get('/dashboard/api/events').expect(503);
      expect(res.body).toEqual({
        statusCode: 503,
        error: 'Service Unavailable',
        message: expect.any(String),
      });
      expect(own.hub.pageCount).toBe(0);
    } finally {
      await own.close();
    }
  });
});
