import type { Redis } from 'ioredis';
import { completeJob, failJob, partitionTagOf, type JobId } from '@app/echomq/internal';
import { serverNowMs } from '../support/assertions';
import { claimSome } from '../support/claims';
import { uniqueQueue } from '../support/redis';
import { usePartitionedApp } from './support/partitioned-app';
import { laneIn } from './support/lanes';
import { partitionNames } from './support/physical';

const PARTITIONS = 3;
const newestFirst = (ids: readonly string[]) => [...ids].sort().reverse();

/** Waits (boundedly) until the Redis clock has moved past `ms`, so two events do not share a millisecond. */
async function pastMs(redis: Redis, ms: number): Promise<void> {
  for (let tries = 0; tries < 1_000 && (await serverNowMs(redis)) <= ms; tries++);
}

describe('reads of a partitioned queue merge its partitions into one queue', () => {
  const suite = usePartitionedApp({ defaults: { partitions: PARTITIONS } });

  /** `count` jobs enqueued one call at a time, so they spread over every partition in turn. */
  async function spread(queue: string, count: number, options = {}): Promise<JobId[]> {
    const ids: JobId[] = [];
    for (let n = 0; n < count; n++) ids.push(await suite.queues.enqueue(queue, { n }, options));
    expect(new Set(ids.map(partitionTagOf)).size).toBe(Math.min(count, PARTITIONS));
    return ids;
  }

  it('browses pending newest first across partitions, and pages with after give every id once, in order', async () => {
    const queue = uniqueQueue('browse');
    const ids = [
      ...(await spread(queue, 14)),
      ...(await suite.queues.enqueueMany(queue, [{ data: 'a' }, { data: 'b' }])),
    ];
    expect(await suite.queues.browse(queue, 'pending')).toEqual(newestFirst(ids));
    expect(await suite.queues.browse(queue, 'pending', { limit: 5 })).toEqual(newestFirst(ids).slice(0, 5));
    for (const size of [1, 3, 4, 7]) {
      const pages: string[] = [];
      let after: string | undefined;
      for (let guard = 0; guard < 100; guard++) {
        const page = await suite.queues.browse(queue, 'pending', {
          limit: size,
          ...(after ? { after } : {}),
        });
        if (page.length === 0) break;
        expect(page.length).toBeLessThanOrEqual(size);
        pages.push(...page);
        after = page[page.length - 1];
      }
      expect(pages).toEqual(newestFirst(ids));
    }
    const views = await suite.queues.listJobs(queue, 'pending', { limit: 6 });
    expect(views.map((view) => view.id)).toEqual(newestFirst(ids).slice(0, 6));
    for (const view of views) expect(view).toMatchObject({ queue, state: 'pending' });
  });

  it('browses dead newest first across partitions, with exact paging', async () => {
    const queue = uniqueQueue('dead');
    const ids = await spread(queue, 9, { maxAttempts: 1 });
    for (let k = 0; k < PARTITIONS; k++) {
      const ctx = suite.queues.context(`${queue}#${k}`);
      for (const claim of await claimSome(ctx, 10)) {
        await failJob(ctx, claim, { error: 'dead', backoffMs: 0, unrecoverable: false });
      }
    }
    expect(await suite.queues.browse(queue, 'dead')).toEqual(newestFirst(ids));
    const first = await suite.queues.browse(queue, 'dead', { limit: 4 });
    const rest = await suite.queues.browse(queue, 'dead', { after: first[3] });
    expect([...first, ...rest]).toEqual(newestFirst(ids));
    expect((await suite.queues.listJobs(queue, 'dead')).map((view) => view.state)).toEqual(
      Array(9).fill('dead'),
    );
  });

  it('browses active and schedule soonest first across partitions', async () => {
    const queue = uniqueQueue('soon');
    const ids = await spread(queue, 6);
    const byPartition = (k: number) => ids.filter((id) => partitionTagOf(id) === k).sort();
    // Leases of 30, 10 and 20 s: partition 1's deadlines come first, then 2's, then 0's.
    for (const [k, leaseMs] of [
      [0, 30_000],
      [1, 10_000],
      [2, 20_000],
    ]) {
      await claimSome(suite.queues.context(`${queue}#${k}`), 10, leaseMs);
    }
    expect(await suite.queues.browse(queue, 'active')).toEqual([
      ...byPartition(1),
      ...byPartition(2),
      ...byPartition(0),
    ]);
    expect(await suite.queues.browse(queue, 'active', { limit: 3 })).toEqual(
      [...byPartition(1), ...byPartition(2)].slice(0, 3),
    );

    const delays = [50_000, 10_000, 30_000, 20_000, 40_000, 60_000];
    const delayed: JobId[] = [];
    for (const delayMs of delays) delayed.push(await suite.queues.enqueue(queue, null, { delayMs }));
    expect(new Set(delayed.map(partitionTagOf)).size).toBe(PARTITIONS);
    const soonest = delays
      .map((delay, index) => ({ delay, id: delayed[index] }))
      .sort((a, b) => a.delay - b.delay);
    expect(await suite.queues.browse(queue, 'schedule')).toEqual(soonest.map((each) => each.id));
    expect((await suite.queues.listJobs(queue, 'schedule', { limit: 2 })).map((view) => view.id)).toEqual(
      soonest.slice(0, 2).map((each) => each.id),
    );
  });

  it('sums counts and transition counters over the partitions', async () => {
    const queue = uniqueQueue('sums');
    await spread(queue, 7);
    await spread(queue, 3, { delayMs: 60_000 });
    await claimSome(suite.queues.context(`${queue}#0`), 1);
    await claimSome(suite.queues.context(`${queue}#2`), 1);
    expect(await suite.queues.counts(queue)).toEqual({ pending: 5, active: 2, schedule: 3, dead: 0 });
    const perPartition = await Promise.all(
      partitionNames(queue, PARTITIONS).map((physical) => suite.queues.metrics(physical)),
    );
    const metrics = await suite.queues.metrics(queue);
    for (const field of Object.keys(metrics)) {
      expect(metrics[field]).toBe(perPartition.reduce((sum, each) => sum + (each[field] ?? 0), 0));
    }
    expect(Object.values(metrics).some((value) => value >= 10)).toBe(true);
  });

  it('lists each lane once, its jobs counted over every partition that holds it', async () => {
    const queue = uniqueQueue('lanes');
    const [a, b] = [laneIn(0, PARTITIONS, 'a'), laneIn(2, PARTITIONS, 'b')];
    await suite.queues.enqueueMany(queue, [
      { data: 1, lane: a },
      { data: 2, lane: a },
      { data: 3, lane: b },
    ]);
    // Lane a also in partition 1, written there by naming the partition itself.
    await suite.queues.enqueue(`${queue}#1`, 4, { lane: a });
    await claimSome(suite.queues.context(`${queue}#2`), 1);
    const lanes = await suite.queues.lanes(queue);
    expect(lanes.map(({ lane, pending, active }) => ({ lane, pending, active }))).toEqual(
      [
        { lane: a, pending: 3, active: 0 },
        { lane: b, pending: 0, active: 1 },
      ].sort((x, y) => (x.lane < y.lane ? -1 : 1)),
    );
  });

  it('merges recently completed jobs of every partition, newest first', async () => {
    const queue = uniqueQueue('recent');
    const ids = await spread(queue, 3);
    const completed: JobId[] = [];
    // Completed in the order partition 2, 0, 1, each in a later millisecond than the last.
    for (const k of [2, 0, 1]) {
      const ctx = suite.queues.context(`${queue}#${k}`);
      const [claim] = await claimSome(ctx, 1);
      await pastMs(suite.redis, await serverNowMs(suite.redis));
      await completeJob(ctx, claim, JSON.stringify({ k }), 0);
      completed.push(claim.id as JobId);
    }
    expect(new Set(completed)).toEqual(new Set(ids));
    const recent = await suite.queues.recentCompleted(queue);
    expect(recent.map((each) => each.id)).toEqual([...completed].reverse());
    expect(recent.map((each) => each.result)).toEqual([{ k: 1 }, { k: 0 }, { k: 2 }]);
    expect((await suite.queues.recentCompleted(queue, { limit: 2 })).map((each) => each.id)).toEqual(
      [...completed].reverse().slice(0, 2),
    );
  });
});
