import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import request from 'supertest';
import { QueueService } from '@app/echomq';
import {
  claimJobs,
  failJob,
  partitionQueueName,
  partitionTagOf,
  queueKeys,
  type StateSet,
} from '@app/echomq/internal';
import { startDashboardApi, until, type DashboardApi } from '../dashboard/server/support/dashboard-api';
import { SseReader } from '../dashboard/server/support/sse';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

interface Job {
  id: string;
  queue: string;
  state: string;
  lane?: string;
}
interface Page {
  jobs: Job[];
  next: string | null;
}
interface JobMessage {
  queue: string;
  type: string;
  id: string | null;
}

const PARTITIONS = 3;

/**
 * The api and the dashboard on partitioned queues: every route takes the queue's own name and
 * answers for all its partitions. The queues are declared by a producer on the api's key prefix
 * before the api first reads the partitions registry, as a deployment's workers would have.
 */
describe('the api and the dashboard present a partitioned queue as one', () => {
  let api: DashboardApi;
  let producer: INestApplication;
  let queues: QueueService;
  let redis: Redis;
  const names = {
    listed: uniqueQueue('listed'),
    pending: uniqueQueue('pending'),
    scored: uniqueQueue('scored'),
    dead: uniqueQueue('dead'),
    live: uniqueQueue('live'),
    raised: uniqueQueue('raised'),
  };
  const open: SseReader[] = [];

  beforeAll(async () => {
    redis = connect();
    api = await startDashboardApi();
    const partitioned = Object.fromEntries(
      Object.values(names).map((queue) => [queue, { partitions: queue === names.raised ? 2 : PARTITIONS }]),
    );
    producer = await bootApp([], { keyPrefix: api.prefix, startProcessors: false, queues: partitioned });
    queues = producer.get(QueueService);
    // Records each count in the partitions registry (a queue's first use does).
    for (const queue of Object.values(names)) await queues.partitionLayout(queue);
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  afterAll(async () => {
    await producer.close();
    await api.close();
    await redis.quit();
  });

  const http = () => request(api.url);
  const list = async (queue: string, query: Record<string, string | number>): Promise<Page> =>
    (await http().get(`/dashboard/api/queues/${queue}/jobs`).query(query).expect(200)).body as Page;
  async function allPages(queue: string, query: Record<string, string | number>): Promise<Job[]> {
    const jobs: Job[] = [];
    let after: string | null = null;
    for (let pages = 0; ; pages++) {
      if (pages > 50) throw new Error('too many pages');
      const page = await list(queue, after === null ? query : { ...query, after });
      jobs.push(...page.jobs);
      if (page.next === null) return jobs;
      expect(page.next.length).toBeLessThanOrEqual(256);
      after = page.next;
    }
  }
  /** `count` unpinned jobs, one call each: they take the partitions in turn. */
  async function spread(queue: string, count: number, delayMs?: number): Promise<string[]> {
    const ids: string[] = [];
    for (let n = 0; n < count; n++)
      ids.push(await queues.enqueue(queue, { n }, delayMs === undefined ? {} : { delayMs }));
    expect(new Set(ids.map((id) => partitionTagOf(id))).size).toBe(Math.min(count, PARTITIONS));
    return ids;
  }
  const physicalOf = (queue: string) =>
    Array.from({ length: PARTITIONS }, (_, k) => partitionQueueName(queue, k));
  /** Every member of a state set over the queue's partitions with its score, soonest first, ties by id. */
  async function scoredMembers(queue: string, state: StateSet): Promise<string[]> {
    const members: [string, number][] = [];
    for (const physical of physicalOf(queue)) {
      const flat = await redis.zrange(queueKeys(physical, api.prefix).set(state), 0, -1, 'WITHSCORES');
      for (let i = 0; i < flat.length; i += 2) members.push([flat[i], Number(flat[i + 1])]);
    }
    return members.sort((a, b) => a[1] - b[1] || (a[0] < b[0] ? -1 : 1)).map(([id]) => id);
  }

  it('lists the queue once with its depths summed, and says in its view how many partitions it has', async () => {
    const queue = names.listed;
    await spread(queue, 4);
    await queues.enqueue(queue, { later: true }, { delayMs: 600_000 });
    const all = (await http().get('/queues').expect(200)).body as { queues: { queue: string }[] };
    expect(all.queues).toContainEqual({ queue, counts: { pending: 4, active: 0, schedule: 1, dead: 0 } });
    expect(all.queues.some((q) => q.queue.includes('#'))).toBe(false);

    const one = (await http().get(`/queues/${queue}`).expect(200)).body as Record<string, unknown>;
    expect(one).toMatchObject({
      queue,
      counts: { pending: 4, active: 0, schedule: 1, dead: 0 },
      metrics: expect.objectContaining({ enqueued: 5 }),
      paused: false,
      partitions: PARTITIONS,
    });

    const overview = (await http().get('/dashboard/api/overview').expect(200)).body as {
      queues: { queue: string; counts: { pending: number } }[];
    };
    expect(overview.queues.filter((q) => q.queue === queue).map((q) => q.counts.pending)).toEqual([4]);
    expect(overview.queues.some((q) => q.queue.includes('#'))).toBe(false);
  });

  it("refuses a partition's own name over HTTP: the api names queues only", async () => {
    const physical = encodeURIComponent(partitionQueueName(names.listed, 1));
    for (const path of [
      `/queues/${physical}`,
      `/queues/${physical}/jobs`,
      `/dashboard/api/queues/${physical}/jobs`,
      `/dashboard/api/events?queue=${physical}`,
    ]) {
      const res = await http().get(path).expect(400);
      expect(res.body).toMatchObject({ code: 'INVALID_QUEUE_NAME' });
    }
  });

  it('pages pending over every partition, newest first, exactly', async () => {
    const queue = names.pending;
    const ids = await spread(queue, 10);
    const laned = await queues.enqueueMany(
      queue,
      ['a', 'b', 'c', 'd'].map((lane) => ({ data: lane, lane })),
    );
    const newestFirst = [...ids, ...laned].sort().reverse();
    const pages = await allPages(queue, { limit: 3 });
    expect(pages.map((job) => job.id)).toEqual(newestFirst);
    expect(pages.every((job) => job.queue === queue && job.state === 'pending')).toBe(true);
    // Filtered by lane: the lane's own partition.
    expect((await allPages(queue, { lane: 'c', limit: 2 })).map((job) => job.id)).toEqual([laned[2]]);
    // Each job's detail, by the queue's name, wherever it is.
    for (const id of ids.slice(0, PARTITIONS)) {
      const detail = (await http().get(`/queues/${queue}/jobs/${id}`).expect(200)).body as Job;
      expect(detail).toMatchObject({ id, queue, state: 'pending' });
    }
  });

  it('pages schedule and active soonest first over every partition, through deadlines shared across them', async () => {
    const queue = names.scored;
    await spread(queue, 12, 600_000);
    // Ties across partitions: six run-ats moved to one instant, in every partition alike.
    const runAt = Date.now() + 300_000;
    for (const physical of physicalOf(queue)) {
      const key = queueKeys(physical, api.prefix).schedule;
      for (const id of await redis.zrange(key, 0, 1)) await redis.zadd(key, 'XX', runAt, id);
    }
    const schedule = await scoredMembers(queue, 'schedule');
    expect(schedule).toHaveLength(12);
    for (const limit of [1, 2, 5]) {
      expect((await allPages(queue, { state: 'schedule', limit })).map((job) => job.id)).toEqual(schedule);
    }

    // Claimed from each partition in one call each: every lease of a partition ends at one instant.
    await Promise.all(
      physicalOf(queue).map(async (physical) => {
        const ctx = api.queues.context(physical);
        for (const id of await redis.zrange(queueKeys(physical, api.prefix).schedule, 0, 1))
          await redis.zadd(ctx.keys.schedule, 'XX', 0, id);
        await claimJobs(ctx, { count: 10, leaseMs: 600_000, claimantPrefix: 'views-api' });
      }),
    );
    const active = await scoredMembers(queue, 'active');
    expect(active).toHaveLength(6);
    for (const limit of [1, 4]) {
      expect((await allPages(queue, { state: 'active', limit })).map((job) => job.id)).toEqual(active);
    }
  });

  it('lists dead jobs of every partition', async () => {
    const queue = names.dead;
    const ids = await spread(queue, 6);
    for (const physical of physicalOf(queue)) {
      const ctx = api.queues.context(physical);
      const { jobs } = await claimJobs(ctx, { count: 10, leaseMs: 60_000, claimantPrefix: 'views-dead' });
      for (const job of jobs)
        await failJob(ctx, job, { error: 'Error: boom', backoffMs: 0, unrecoverable: true });
    }
    const dead = await allPages(queue, { state: 'dead', limit: 4 });
    expect(dead.map((job) => job.id)).toEqual([...ids].sort().reverse());
    expect(dead.every((job) => job.state === 'dead')).toBe(true);
  });

  /** A queue page's stream, with the hub following the queue. */
  async function follow(queue: string): Promise<SseReader> {
    const stream = await SseReader.open(api.url, `/dashboard/api/events?queue=${queue}`);
    open.push(stream);
    await until('the hub to follow the queue', async () =>
      (await api.hub.following(queue)) ? true : undefined,
    );
    return stream;
  }

  it("streams the job events of every partition under the queue's name", async () => {
    const queue = names.live;
    const stream = await follow(queue);
    const ids = await spread(queue, PARTITIONS);
    for (const id of ids) await stream.next<JobMessage>('job', (m) => m.type === 'enqueued' && m.id === id);
    expect(stream.data<JobMessage>('job').every((m) => m.queue === queue)).toBe(true);
  });

  it('follows the new partitions of a queue whose count is raised while a page shows it, each event once', async () => {
    const queue = names.raised;
    const stream = await follow(queue);
    // Another producer raises the count to 3. The api's subscription looks for new partitions
    // every 5 s, and the api reads the registry again once its copy is 5 s old (in the
    // background: the look that starts the read still sees 2). So up to about 10 s while pages
    // keep the overview sampler reading layouts; up to 15 s if nothing else asked for them.
    const raiser = await bootApp([], {
      keyPrefix: api.prefix,
      startProcessors: false,
      queues: { [queue]: { partitions: 3 } },
    });
    try {
      const raised = raiser.get(QueueService);
      expect((await raised.partitionLayout(queue)).count).toBe(3);
      const third = partitionQueueName(queue, 2);
      const sent = new Set<string>();
      await until(
        'an event of the new partition',
        async () => {
          sent.add(await raised.enqueue(third, { probe: true }));
          return stream.data<JobMessage>('job').some((m) => m.id !== null && sent.has(m.id))
            ? true
            : undefined;
        },
        20_000,
      );
      // One more job in an old partition, then one after it: once the second's event is in,
      // a second copy of the first (from a partition followed twice) would be too.
      const [first, second] = [
        await raised.enqueue(partitionQueueName(queue, 0), { n: 1 }),
        await raised.enqueue(partitionQueueName(queue, 0), { n: 2 }),
      ];
      await stream.next<JobMessage>('job', (m) => m.type === 'enqueued' && m.id === second);
      const firsts = stream.data<JobMessage>('job').filter((m) => m.type === 'enqueued' && m.id === first);
      expect(firsts).toHaveLength(1);
      expect(stream.data<JobMessage>('job').every((m) => m.queue === queue)).toBe(true);
    } finally {
      await raiser.close();
    }
  }, 45_000);
});
