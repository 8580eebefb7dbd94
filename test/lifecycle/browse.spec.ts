import { Test, type TestingModule } from '@nestjs/testing';
import {
  EchoMqModule,
  InvalidArgumentError,
  InvalidJobIdError,
  QueueService,
  claimJobs,
  failJob,
} from '@app/echomq/internal';
import { uniqueQueue } from '../support/redis';

describe('browse: ids by state, with no index', () => {
  let moduleRef: TestingModule;
  let queues: QueueService;

  beforeAll(async () => {
    moduleRef = await Test.createTestingModule({
      imports: [EchoMqModule.forRoot({ connection: { url: process.env.REDIS_URL }, nodeId: 901 })],
    }).compile();
    await moduleRef.init();
    queues = moduleRef.get(QueueService);
  });
  afterAll(async () => {
    await moduleRef.close();
  });

  async function enqueueEach(queue: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(await queues.enqueue(queue, { i }));
    return ids;
  }

  describe('the scenario from the seeds: five pending jobs', () => {
    const queue = uniqueQueue('seeds');
    let ids: string[];

    beforeAll(async () => {
      ids = await enqueueEach(queue, 5);
    });

    it('browse with limit 3 returns the three newest ids, newest first', async () => {
      expect(await queues.browse(queue, 'pending', { limit: 3 })).toEqual([ids[4], ids[3], ids[2]]);
    });

    it('the pending depth is 5', async () => {
      expect(await queues.counts(queue)).toEqual({ pending: 5, active: 0, schedule: 0, dead: 0 });
    });

    it('after pages on from the last id seen, exclusive', async () => {
      const page1 = await queues.browse(queue, 'pending', { limit: 3 });
      const page2 = await queues.browse(queue, 'pending', { limit: 3, after: page1.at(-1) });
      expect(page2).toEqual([ids[1], ids[0]]);
      expect(await queues.browse(queue, 'pending', { limit: 3, after: page2.at(-1) })).toEqual([]);
    });

    it('after an id that is not in the set continues from where it would sort', async () => {
      const between = await queues.enqueue(uniqueQueue('elsewhere'), {}); // minted after every id above
      expect(await queues.browse(queue, 'pending', { limit: 2, after: between })).toEqual([ids[4], ids[3]]);
    });

    it('the default limit returns them all', async () => {
      expect(await queues.browse(queue, 'pending')).toEqual([...ids].reverse());
    });
  });

  it('paging with after visits every id exactly once, newest first', async () => {
    const queue = uniqueQueue('paging');
    const ids = await queues.enqueueMany(
      queue,
      Array.from({ length: 11 }, (_, i) => ({ data: i })),
    );
    const seen: string[] = [];
    let after: string | undefined;
    for (let round = 0; round < 10; round++) {
      const page = await queues.browse(queue, 'pending', { limit: 4, ...(after ? { after } : {}) });
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(4);
      seen.push(...page);
      after = page.at(-1);
    }
    expect(seen).toEqual([...ids].reverse());
  });

  it('caps the default page at 50', async () => {
    const queue = uniqueQueue('big');
    const ids = await queues.enqueueMany(
      queue,
      Array.from({ length: 60 }, (_, i) => ({ data: i })),
    );
    const page = await queues.browse(queue, 'pending');
    expect(page).toHaveLength(50);
    expect(page[0]).toBe(ids[59]);
    expect(page[49]).toBe(ids[10]);
  });

  it('dead is browsed newest first too', async () => {
    const queue = uniqueQueue('dead');
    const ids = await queues.enqueueMany(queue, [
      { data: 1, maxAttempts: 1 },
      { data: 2, maxAttempts: 1 },
      { data: 3, maxAttempts: 1 },
    ]);
    const ctx = queues.context(queue);
    const { jobs } = await claimJobs(ctx, { count: 3, leaseMs: 30_000, claimantPrefix: 'w' });
    // Fail them in an order unrelated to mint order: the morgue still lists newest first.
    for (const job of [jobs[1], jobs[2], jobs[0]]) {
      await failJob(ctx, job, { error: 'x', backoffMs: 0, unrecoverable: false });
    }
    expect(await queues.browse(queue, 'dead')).toEqual([ids[2], ids[1], ids[0]]);
    expect(await queues.browse(queue, 'dead', { limit: 1, after: ids[2] })).toEqual([ids[1]]);
  });

  it('active is browsed by lease deadline, soonest first', async () => {
    const queue = uniqueQueue('active');
    const [older, newer] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
    const ctx = queues.context(queue);
    await claimJobs(ctx, { count: 1, leaseMs: 120_000, claimantPrefix: 'long' }); // older, long lease
    await claimJobs(ctx, { count: 1, leaseMs: 30_000, claimantPrefix: 'short' }); // newer, short lease
    expect(await queues.browse(queue, 'active')).toEqual([newer, older]);
    expect(await queues.browse(queue, 'active', { limit: 1 })).toEqual([newer]);
  });

  it('schedule is browsed by run-at, soonest first', async () => {
    const queue = uniqueQueue('schedule');
    const late = await queues.enqueue(queue, 1, { delayMs: 600_000 });
    const soon = await queues.enqueue(queue, 2, { delayMs: 60_000 });
    const mid = await queues.enqueue(queue, 3, { runAt: new Date(Date.now() + 300_000) });
    expect(await queues.browse(queue, 'schedule')).toEqual([soon, mid, late]);
  });

  it('listJobs returns the views in browse order', async () => {
    const queue = uniqueQueue('list');
    const ids = await queues.enqueueMany(queue, [{ data: 'a' }, { data: 'b' }, { data: 'c' }]);
    const views = await queues.listJobs(queue, 'pending', { limit: 2 });
    expect(views.map((v) => [v.id, v.data, v.state])).toEqual([
      [ids[2], 'c', 'pending'],
      [ids[1], 'b', 'pending'],
    ]);
    expect(await queues.listJobs(queue, 'dead')).toEqual([]);
  });

  it('an unknown queue browses empty', async () => {
    expect(await queues.browse(uniqueQueue('never'), 'pending')).toEqual([]);
    expect(await queues.counts(uniqueQueue('never'))).toEqual({
      pending: 0,
      active: 0,
      schedule: 0,
      dead: 0,
    });
  });

  it('refuses a limit outside 1..1000, after on active / schedule, and a malformed after', async () => {
    const queue = uniqueQueue('bad');
    const [id] = await enqueueEach(queue, 1);
    for (const limit of [0, -1, 1001, 2.5, Number.NaN]) {
      await expect(queues.browse(queue, 'pending', { limit })).rejects.toBeInstanceOf(InvalidArgumentError);
    }
    expect(await queues.browse(queue, 'pending', { limit: 1000 })).toEqual([id]);
    await expect(queues.browse(queue, 'active', { after: id })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(queues.browse(queue, 'schedule', { after: id })).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    await expect(queues.browse(queue, 'pending', { after: 'JOB-oops' })).rejects.toBeInstanceOf(
      InvalidJobIdError,
    );
    await expect(queues.browse(queue, 'dead', { after: '(' + id })).rejects.toBeInstanceOf(InvalidJobIdError);
  });
});
