import request from 'supertest';
import { keyDump } from '../../api/support/api';
import { connect, uniqueQueue } from '../../support/redis';
import { completeSome, killSome, startDashboardApi, until, type DashboardApi } from './support/dashboard-api';

interface HistoryPoint {
  at: string;
  enqueued: number;
  completed: number;
  failed: number;
  dead: number;
}
interface QueueOverview {
  queue: string;
  counts: { pending: number; active: number; schedule: number; dead: number };
  paused: boolean;
  lanes: { lane: string; pending: number; active: number; paused: boolean; held: boolean }[];
  history: HistoryPoint[];
}
interface Overview {
  at: string;
  refreshMs: number;
  bucketMs: number;
  queuesTotal: number;
  queues: QueueOverview[];
}

const sum = (points: HistoryPoint[], field: keyof Omit<HistoryPoint, 'at'>) =>
  points.reduce((total, point) => total + point[field], 0);

describe('dashboard overview', () => {
  let api: DashboardApi;

  beforeAll(async () => {
    api = await startDashboardApi();
  });
  afterAll(async () => {
    await api.close();
  });

  const overview = async (): Promise<Overview> =>
    (await request(api.url).get('/dashboard/api/overview').expect(200)).body as Overview;
  const queueIn = (o: Overview, queue: string) => o.queues.find((q) => q.queue === queue);

  it('shows every queue with its four depths, its lanes and its paused state', async () => {
    const queue = uniqueQueue('ov');
    await api.queues.enqueueMany(queue, [
      { data: 1 },
      { data: 2, lane: 'tenant-a' },
      { data: 3, lane: 'tenant-a' },
      { data: 4, lane: 'tenant-b' },
      { data: 5, delayMs: 600_000 },
      { data: 6 },
    ]);
    await killSome(api, queue, 1);
    await api.queues.pauseLane(queue, 'tenant-b');
    await api.queues.pause(queue);
    const o = await until('the queue in the overview', async () => {
      const read = await overview();
      const found = queueIn(read, queue);
      return found?.paused ? { read, found } : undefined;
    });
    expect(o.read).toMatchObject({ refreshMs: 200, bucketMs: 15_000, queuesTotal: o.read.queues.length });
    expect(new Date(o.read.at).toISOString()).toBe(o.read.at);
    expect(o.found.counts).toEqual({ pending: 4, active: 0, schedule: 1, dead: 1 });
    expect(o.found.paused).toBe(true);
    const lanes = Object.fromEntries(o.found.lanes.map((lane) => [lane.lane, lane]));
    expect(lanes['tenant-a']).toEqual({
      lane: 'tenant-a',
      pending: 2,
      active: 0,
      paused: false,
      held: false,
    });
    expect(lanes['tenant-b']).toMatchObject({ lane: 'tenant-b', pending: 1, active: 0, paused: true });
    expect(o.found.history).toEqual(expect.any(Array));
  });

  it('counts history deltas of the transition counters as jobs are enqueued, completed and die', async () => {
    const queue = uniqueQueue('hist');
    await api.queues.enqueue(queue, { first: true });
    // A first reading sets the baseline of the new queue.
    const baseline = await until('the queue in the overview', async () => queueIn(await overview(), queue));
    const before = {
      enqueued: sum(baseline.history, 'enqueued'),
      completed: sum(baseline.history, 'completed'),
      dead: sum(baseline.history, 'dead'),
    };
    await api.queues.enqueueMany(
      queue,
      Array.from({ length: 7 }, (_, i) => ({ data: i })),
    );
    await completeSome(api, queue, 5);
    await killSome(api, queue, 2);
    const after = await until('the deltas in the history', async () => {
      const found = queueIn(await overview(), queue);
      return found && sum(found.history, 'completed') - before.completed === 5 ? found : undefined;
    });
    expect(sum(after.history, 'enqueued') - before.enqueued).toBe(7);
    expect(sum(after.history, 'dead') - before.dead).toBe(2);
    expect(sum(after.history, 'failed')).toBe(0);
    // Oldest first, one point per bucket, each at a bucket boundary.
    const ats = after.history.map((point) => Date.parse(point.at));
    expect([...ats].sort((a, b) => a - b)).toEqual(ats);
    expect(new Set(ats).size).toBe(ats.length);
    for (const at of ats) expect(at % 15_000).toBe(0);
    expect(after.counts).toEqual({ pending: 1, active: 0, schedule: 0, dead: 2 });
  });

  it('answers many concurrent GETs with one reading', async () => {
    const quiet = await startDashboardApi({ EMQ_DASHBOARD_REFRESH_MS: '10000' });
    try {
      await quiet.queues.enqueue(uniqueQueue('burst'), {});
      const counts = jest.spyOn(quiet.queues, 'counts');
      const before = quiet.sampler.readCount;
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => request(quiet.url).get('/dashboard/api/overview').expect(200)),
      );
      expect(quiet.sampler.readCount - before).toBe(1);
      expect(counts).toHaveBeenCalledTimes(1);
      expect(new Set(answers.map((res) => res.body.at)).size).toBe(1);
    } finally {
      await quiet.close();
    }
  });

  it('reads nothing while nobody watches', async () => {
    const idle = await startDashboardApi();
    try {
      await request(idle.url).get('/dashboard/api/overview').expect(200);
      // One reading for the GET, and then nothing is armed: no
      // timer, no reading in flight, so nothing reads until a page asks again.
      await until('the sampler to stop', () => (idle.sampler.isIdle ? true : undefined));
      expect(idle.sampler.readCount).toBe(1);
      expect(idle.hub.pageCount).toBe(0);
    } finally {
      await idle.close();
    }
  });

  it('writes nothing: the overview of a queue read twice leaves its keys as they were', async () => {
    const queue = uniqueQueue('ro');
    await api.queues.enqueue(queue, {});
    const redis = connect();
    try {
      const before = await keyDump(redis, `${api.prefix}:*`);
      await until('the queue in the overview', async () => queueIn(await overview(), queue));
      const readings = api.sampler.readCount;
      await until('a second reading', async () =>
        (await overview()) && api.sampler.readCount > readings ? true : undefined,
      );
      expect(await keyDump(redis, `${api.prefix}:*`)).toEqual(before);
    } finally {
      await redis.quit();
    }
  });
});

describe('dashboard overview: the cost of one reading on Redis', () => {
  it('is 1 + 4 x queues commands, none of them a write', async () => {
    const { openMonitor } = await import('../../support/monitor');
    const api = await startDashboardApi({ EMQ_DASHBOARD_REFRESH_MS: '300' });
    const monitor = await openMonitor();
    try {
      const queues = [uniqueQueue('cost'), uniqueQueue('cost')];
      for (const queue of queues) await api.queues.enqueue(queue, {}, { lane: 'tenant-a' });
      // A first reading loads the scripts; then the sampler stops (nobody watches).
      await request(api.url).get('/dashboard/api/overview').expect(200);
      await until('the sampler to stop', () => (api.sampler.isIdle ? true : undefined));
      const seen: string[] = [];
      const inScripts = new Set<string>();
      const opening = `${api.prefix}:marker-${uniqueQueue('open')}`;
      const closing = `${api.prefix}:marker-${uniqueQueue('close')}`;
      let phase: 'before' | 'during' | 'after' = 'before';
      const listener = (_time: string, args: string[], source: string) => {
        // The monitor reports in the order Redis ran commands (it may lag behind): count only
        // what ran between a command sent just before the reading and one sent just after it.
        if (args.includes(opening)) return void (phase = 'during');
        if (args.includes(closing)) return void (phase = 'after');
        // Commands of this api's keys, leaving out the node lease it renews on its own schedule.
        const ours = args.some(
          (arg) => arg.startsWith(`${api.prefix}:`) && !arg.startsWith(`${api.prefix}:node:`),
        );
        if (phase !== 'during' || !ours) return;
        if (source === 'lua') inScripts.add(args[0].toLowerCase());
        else seen.push(args[0].toLowerCase());
      };
      monitor.on('monitor', listener);
      const redis = connect();
      const before = api.sampler.readCount;
      await redis.exists(opening);
      await request(api.url).get('/dashboard/api/overview').expect(200);
      await until('the sampler to stop', () => (api.sampler.isIdle ? true : undefined));
      await redis.exists(closing);
      await redis.quit();
      await until('the closing marker', () => (phase === 'after' ? true : undefined));
      monitor.off('monitor', listener);
      expect(api.sampler.readCount - before).toBe(1);
      const tally = seen.reduce<Record<string, number>>(
        (t, name) => ({ ...t, [name]: (t[name] ?? 0) + 1 }),
        {},
      );
      // SMEMBERS of the registry, then per queue: depths and lanes (two read-only scripts),
      // counters, pause flag.
      expect(tally).toEqual({
        smembers: 1,
        evalsha: 2 * queues.length,
        hgetall: queues.length,
        exists: queues.length,
      });
      const writes = ['set', 'del', 'hset', 'hdel', 'hincrby', 'zadd', 'zrem', 'zpopmin', 'sadd', 'srem'];
      expect([...inScripts].filter((name) => writes.includes(name) || name.startsWith('x'))).toEqual([]);
      expect(inScripts.size).toBeGreaterThan(0);
    } finally {
      monitor.disconnect();
      await api.close();
    }
  });
});
