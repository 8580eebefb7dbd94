import type { Redis } from 'ioredis';
import request from 'supertest';
import { keyDump } from '../../api/support/api';
import { connect, uniqueQueue } from '../../support/redis';
import { claim, completeSome, killSome, startDashboardApi, type DashboardApi } from './support/dashboard-api';

interface Job {
  id: string;
  name?: string;
  lane?: string;
  state: string;
  finishedAt?: string;
  data?: unknown;
}
interface Page {
  jobs: Job[];
  next: string | null;
}

describe('dashboard job lists', () => {
  let api: DashboardApi;
  let redis: Redis;

  beforeAll(async () => {
    api = await startDashboardApi();
    redis = connect();
  });
  afterAll(async () => {
    await api.close();
    await redis.quit();
  });

  const list = async (queue: string, query: Record<string, string | number>): Promise<Page> =>
    (await request(api.url).get(`/dashboard/api/queues/${queue}/jobs`).query(query).expect(200)).body as Page;

  /** Every page of a listing, following `next`; fails past `maxPages`. */
  async function allPages(
    queue: string,
    query: Record<string, string | number>,
    maxPages = 50,
  ): Promise<Page[]> {
    const pages: Page[] = [];
    let after: string | null | undefined;
    do {
      const page = await list(queue, after ? { ...query, after } : query);
      pages.push(page);
      after = page.next;
      if (pages.length > maxPages) throw new Error('too many pages');
    } while (after);
    return pages;
  }
  const idsOf = (pages: Page[]) => pages.flatMap((page) => page.jobs.map((job) => job.id));

  it('filters pending by a case-insensitive part of the name, newest first, page by page', async () => {
    const queue = uniqueQueue('names');
    const names = ['send-email', 'resize-image', 'Send-SMS'];
    const ids = await api.queues.enqueueMany(
      queue,
      Array.from({ length: 30 }, (_, i) => ({ name: names[i % 3], data: i })),
    );
    const wanted = ids.filter((_, i) => i % 3 !== 1).reverse();
    const pages = await allPages(queue, { name: 'SEND', limit: 4 });
    expect(idsOf(pages)).toEqual(wanted);
    expect(pages.slice(0, -1).every((page) => page.jobs.length === 4)).toBe(true);
    expect(pages[pages.length - 1].next).toBeNull();
    expect(pages.flatMap((page) => page.jobs).every((job) => /send/i.test(job.name ?? ''))).toBe(true);
    // The unfiltered listing holds them all, with the api's job shape.
    const all = await list(queue, { limit: 200 });
    expect(all.jobs.map((job) => job.id)).toEqual([...ids].reverse());
    expect(all.next).toBeNull();
    expect(all.jobs[0]).toMatchObject({ id: ids[29], queue, state: 'pending', data: 29, lane: 'default' });
  });

  it('filters by lane (pending from the lane itself) and by lane and name together', async () => {
    const queue = uniqueQueue('lanes');
    const ids = await api.queues.enqueueMany(
      queue,
      Array.from({ length: 20 }, (_, i) => ({
        name: i % 2 === 0 ? 'even' : 'odd',
        lane: i % 4 < 2 ? 'tenant-a' : 'tenant-b',
        data: i,
      })),
    );
    const inA = ids.filter((_, i) => i % 4 < 2).reverse();
    expect(idsOf(await allPages(queue, { lane: 'tenant-a', limit: 3 }))).toEqual(inA);
    const evenInA = ids.filter((_, i) => i % 4 === 0).reverse();
    expect(idsOf(await allPages(queue, { lane: 'tenant-a', name: 'even', limit: 2 }))).toEqual(evenInA);
    expect((await list(queue, { lane: 'nobody' })).jobs).toEqual([]);
  });

  it('lists dead newest first, filtered by lane', async () => {
    const queue = uniqueQueue('dead');
    await api.queues.enqueueMany(
      queue,
      Array.from({ length: 9 }, (_, i) => ({ lane: i % 3 === 0 ? 'x' : 'y', data: i })),
    );
    const killed = await killSome(api, queue, 9);
    const pages = await allPages(queue, { state: 'dead', lane: 'x', limit: 2 });
    const found = pages.flatMap((page) => page.jobs);
    expect(found).toHaveLength(3);
    expect(found.every((job) => job.lane === 'x' && job.state === 'dead')).toBe(true);
    expect(found.map((job) => job.id)).toEqual([...found.map((job) => job.id)].sort().reverse());
    expect(idsOf(await allPages(queue, { state: 'dead', limit: 4 }))).toEqual([...killed].sort().reverse());
  });

  it('pages active by lease deadline, also through jobs that share one deadline', async () => {
    const queue = uniqueQueue('active');
    await api.queues.enqueueMany(
      queue,
      Array.from({ length: 12 }, (_, i) => ({ data: i })),
    );
    // One claim: every lease ends at the same instant, so the listing pages through ties.
    const claimed = await claim(api, queue, 12);
    const pages = await allPages(queue, { state: 'active', limit: 5 });
    expect(pages.map((page) => page.jobs.length)).toEqual([5, 5, 2]);
    expect(idsOf(pages)).toEqual(claimed.map((job) => job.id).sort());
  });

  it('pages schedule soonest first', async () => {
    const queue = uniqueQueue('sched');
    const delays = [50_000, 10_000, 40_000, 20_000, 30_000];
    const ids: string[] = [];
    for (const delayMs of delays) ids.push(await api.queues.enqueue(queue, { delayMs }, { delayMs }));
    const expected = delays
      .map((delay, i) => ({ delay, id: ids[i] }))
      .sort((a, b) => a.delay - b.delay)
      .map(({ id }) => id);
    expect(idsOf(await allPages(queue, { state: 'schedule', limit: 2 }))).toEqual(expected);
  });

  it('lists completed jobs from the recent-completed history, newest first', async () => {
    const queue = uniqueQueue('done');
    await api.queues.enqueueMany(queue, [
      { name: 'kept-a', data: 1 },
      { name: 'kept-b', data: 2 },
    ]);
    const kept = await completeSome(api, queue, 2, 60_000);
    await api.queues.enqueueMany(queue, [{ name: 'gone', data: 3 }]);
    const gone = await completeSome(api, queue, 1, 0);
    const pages = await allPages(queue, { state: 'completed', limit: 2 });
    const jobs = pages.flatMap((page) => page.jobs);
    expect(jobs.map((job) => job.id)).toEqual([gone[0], kept[1], kept[0]]);
    // A row that was not retained comes as what its event recorded.
    expect(jobs[0]).toEqual({ id: gone[0], queue, state: 'completed', finishedAt: expect.any(String) });
    expect(jobs[1]).toMatchObject({ id: kept[1], state: 'completed', name: 'kept-b', data: 2 });
    // A filter matches retained rows only.
    const named = await list(queue, { state: 'completed', name: 'kept-a' });
    expect(named.jobs.map((job) => job.id)).toEqual([kept[0]]);
    expect((await list(queue, { state: 'completed', name: 'gone' })).jobs).toEqual([]);
  });

  it('examines at most 1,000 ids per request: a rare match is reached by following next', async () => {
    const queue = uniqueQueue('window');
    const ids: string[] = [];
    for (let batch = 0; batch < 3; batch++) {
      ids.push(
        ...(await api.queues.enqueueMany(
          queue,
          Array.from({ length: 400 }, (_, i) => ({
            name: batch === 0 && i === 50 ? 'needle' : 'hay',
            data: i,
          })),
        )),
      );
    }
    // Newest first, the needle is the 1,151st id: past the first window.
    const first = await list(queue, { name: 'needle' });
    expect(first.jobs).toEqual([]);
    expect(first.next).toBe(ids[ids.length - 1000]);
    const second = await list(queue, { name: 'needle', after: first.next as string });
    expect(second.jobs.map((job) => job.id)).toEqual([ids[50]]);
    expect(second.next).toBeNull();
  });

  it.each([
    ['state=bogus', { state: 'bogus' }],
    ['limit=0', { limit: '0' }],
    ['limit=201', { limit: '201' }],
    ['limit=abc', { limit: 'abc' }],
    ['an empty name', { name: '' }],
    ['a name too long', { name: 'x'.repeat(201) }],
    ['a bad lane', { lane: 'no spaces' }],
    ['after that is no job id', { after: 'JOB-1' }],
    ['after that is no deadline cursor', { state: 'active', after: 'JOB0000000000A' }],
    ['an unknown parameter', { sort: 'asc' }],
    ['two names', 'name=a&name=b'],
  ])('refuses %s with a 400 JSON body and writes nothing', async (_label, query) => {
    const queue = uniqueQueue('bad');
    await api.queues.enqueue(queue, {});
    const before = await keyDump(redis, `${api.prefix}:*`);
    const res = await request(api.url).get(`/dashboard/api/queues/${queue}/jobs`).query(query).expect(400);
    expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(await keyDump(redis, `${api.prefix}:*`)).toEqual(before);
  });

  it('refuses a malformed queue name with a 400', async () => {
    const res = await request(api.url).get('/dashboard/api/queues/bad%20name/jobs').expect(400);
    expect(res.body).toMatchObject({ statusCode: 400, code: 'INVALID_QUEUE_NAME' });
  });
});
