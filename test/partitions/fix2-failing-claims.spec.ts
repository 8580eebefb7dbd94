import {
  ProcessorExplorer,
  QueueService,
  partitionQueueName,
  queueKeys,
  type Job,
  type JobId,
} from '@app/echomq/internal';
import type { PartitionLoops } from '@app/echomq/worker/partition-loops';
import { dealSlots, SharedSlots, type Holder } from '@app/echomq/worker/shared-slots';
import { bootApp } from '../support/nest';
import { useAppsAndRedis } from '../support/app-suite';
import { uniqueQueue } from '../support/redis';
import { deferred, processorClass, waitUntil } from '../worker/fixtures/support';
import { FakeLoop } from './support/fake-slot-loop';
import { laneIn } from './support/lanes';

/**
 * A claim loop whose shard is failing (its claims error, it backs off) asks the queue's shared
 * slots for one slot at a time until a claim goes through, so the slots freed meanwhile go to
 * the partitions whose claims work, not to a claim that may hang for a command deadline.
 */

/** The reference: one slot at a time to the fewest held, ties to the lowest ticket, none past a limit. */
function dealOneByOne(free: number, holders: readonly Holder[]): number[] {
  const grants = holders.map(() => 0);
  for (let slot = 0; slot < free; slot++) {
    let best = -1;
    for (let index = 0; index < holders.length; index++) {
      const { held, ticket, limit } = holders[index];
      if (held + grants[index] >= (limit ?? Infinity)) continue;
      if (best < 0) {
        best = index;
        continue;
      }
      const [mine, theirs] = [held + grants[index], holders[best].held + grants[best]];
      if (mine < theirs || (mine === theirs && ticket < holders[best].ticket)) best = index;
    }
    if (best < 0) break;
    grants[best] += 1;
  }
  return grants;
}

describe('dealSlots with limits', () => {
  it('never deals a holder past its limit, and deals what it leaves to the others', () => {
    const holders = [
      { held: 0, ticket: 1, limit: 1 },
      { held: 3, ticket: 2 },
      { held: 5, ticket: 3 },
    ];
    // Without the limit the first would be raised to 3 before anyone else got one.
    expect(dealSlots(3, holders)).toEqual([1, 2, 0]);
    expect(dealSlots(1, holders)).toEqual([1, 0, 0]);
    expect(dealSlots(0, holders)).toEqual([0, 0, 0]);
  });

  it('deals exactly what one-at-a-time dealing would, for any input', () => {
    let state = 11;
    const next = (below: number): number => {
      state = (state * 48_271) % 2_147_483_647;
      return state % below;
    };
    let limited = 0;
    for (let round = 0; round < 500; round++) {
      const holders = Array.from({ length: 1 + next(9) }, (_, index) => {
        const held = next(6);
        const limit = next(3) === 0 ? held + next(3) : undefined;
        return { held, ticket: index * 5 + next(5), ...(limit === undefined ? {} : { limit }) };
      });
      const free = next(30);
      const dealt = dealSlots(free, holders);
      expect([free, holders, dealt]).toEqual([free, holders, dealOneByOne(free, holders)]);
      const unbound = holders.map(({ held, ticket }) => ({ held, ticket }));
      if (dealt.some((grant, index) => grant !== dealSlots(free, unbound)[index])) limited += 1;
    }
    // The limits changed the deal, often: the comparison covered them.
    expect(limited).toBeGreaterThan(100);
  });
});

describe('SharedSlots: a loop whose claims fail', () => {
  it('takes one slot for its next claim, not its share, and the healthy loop gets the rest', () => {
    const pool = new SharedSlots(6);
    const [healthy, failing] = [new FakeLoop(pool), new FakeLoop(pool)];
    healthy.budget.ready();
    // Its first claim asks for its share, and fails (its shard is down).
    expect(failing.send()).toBe(3);
    failing.failed(3);
    expect(healthy.claim()).toBe(6);
    // Three of the healthy loop's handlers return while the failing one comes out of its backoff.
    healthy.finish(3);
    expect(failing.send()).toBe(1);
    // Its claim hangs (a command deadline, on a shard that is down): the healthy loop claims the other two.
    expect(healthy.claim()).toBe(2);
    expect(pool.taken).toBe(6);
    failing.failed(1);
    expect(healthy.claim()).toBe(1);
  });

  it('asks for its full share again once a claim goes through', () => {
    const pool = new SharedSlots(6);
    const [healthy, failing] = [new FakeLoop(pool), new FakeLoop(pool)];
    healthy.budget.ready();
    failing.send();
    failing.failed(3);
    // Back, and its one-slot claim worked (it found one job): the next asks for the rest of its share.
    expect(failing.claim(1)).toBe(1);
    expect(failing.claim()).toBe(2);
    expect(healthy.claim()).toBe(3);
  });

  it('on its own, claims one job at a time until a claim goes through', () => {
    const pool = new SharedSlots(4);
    const loop = new FakeLoop(pool);
    expect(loop.send()).toBe(4);
    loop.failed(4);
    expect(loop.send()).toBe(1);
    // Nothing more while that one is on its way.
    expect(loop.budget.free()).toBe(0);
    loop.failed(1);
    expect(loop.claim()).toBe(1);
    expect(loop.claim()).toBe(3);
  });
});

describe('a worker whose claims on one partition fail', () => {
  const suite = useAppsAndRedis();
  const { apps } = suite;

  it('asks for one slot per claim on it until a claim works, then for its share again', async () => {
    const queue = uniqueQueue('fix2-failing');
    const failingPartition = partitionQueueName(queue, 1);
    const release = deferred();
    const started: JobId[] = [];
    const handler = async (job: Job) => {
      started.push(job.id);
      await release.promise;
      return job.partition;
    };
    const app = await bootApp([processorClass(queue, { partitions: 2, concurrency: 4 }, handler)], {
      startProcessors: false,
      shutdownGraceMs: 200,
    });
    apps.push(app);
    // Every claim on partition 1 now fails in Redis (a wrongly typed schedule set): a shard
    // that errors, while partition 0 claims as usual.
    await suite.redis.set(queueKeys(failingPartition).schedule, 'not a sorted set');
    const explorer = app.get(ProcessorExplorer);
    const group = explorer.loop(queue) as unknown as PartitionLoops;
    const asked: number[] = [];
    const budget = group.loopOf(failingPartition)!.budget;
    const reserve = budget.reserve.bind(budget);
    budget.reserve = (count: number) => {
      asked.push(count);
      reserve(count);
    };
    explorer.startQueue(queue);

    // The first claim, and three after as many backoffs.
    await waitUntil(() => asked.length >= 4, 'four claims on the failing partition');
    expect(asked[0]).toBeGreaterThan(1);
    const afterFirst = asked.slice(1);
    expect(afterFirst).toEqual(afterFirst.map(() => 1));

    // The partition is repaired and gets work: the first claim that works asks for one slot,
    // the next for the rest of the share.
    await suite.redis.del(queueKeys(failingPartition).schedule);
    const repairedAt = asked.length;
    const queues = app.get(QueueService);
    const ids = await queues.enqueueMany(
      queue,
      [0, 1, 2].map((n) => ({ data: n, lane: laneIn(1, 2, 'fail') })),
    );
    await waitUntil(() => started.length === 3, 'the three jobs of the repaired partition running');
    expect(new Set(started)).toEqual(new Set(ids));
    expect(Math.max(...asked.slice(repairedAt))).toBeGreaterThan(1);
    release.resolve();
    for (const id of ids) await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe(1);
  });
});
