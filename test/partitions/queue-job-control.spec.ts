import { InvalidArgumentError, JOB_IDS, failJob, partitionTagOf, type JobId } from '@app/echomq/internal';
import { serverNowMs } from '../support/assertions';
import { claimSome } from '../support/claims';
import { uniqueQueue } from '../support/redis';
import { usePartitionedApp } from './support/partitioned-app';

const PARTITIONS = 3;

/** Bulk and per-job controls of a partitioned queue go over every partition. */
describe('job control of a partitioned queue', () => {
  // A configured node mints on this host's clock: a leased one stamps ids a little ahead of
  // the server's for its first window, and clean's age is read off the ids.
  const suite = usePartitionedApp({ defaults: { partitions: PARTITIONS }, nodeId: 901 });

  /** `count` jobs, one enqueue call each, so they spread over every partition. */
  async function spread(queue: string, count: number, options = {}): Promise<JobId[]> {
    const ids: JobId[] = [];
    for (let n = 0; n < count; n++) ids.push(await suite.queues.enqueue(queue, { n }, options));
    expect(new Set(ids.map(partitionTagOf)).size).toBe(Math.min(count, PARTITIONS));
    return ids;
  }

  /** Every job of `ids` claimed from its partition and failed for good. */
  async function kill(queue: string, ids: readonly JobId[]): Promise<void> {
    for (let k = 0; k < PARTITIONS; k++) {
      const ctx = suite.queues.context(`${queue}#${k}`);
      const mine = ids.filter((id) => partitionTagOf(id) === k);
      if (mine.length === 0) continue;
      for (const claim of await claimSome(ctx, mine.length)) {
        await failJob(ctx, claim, { error: 'x', backoffMs: 0, unrecoverable: true });
      }
    }
  }

  it('drains pending and scheduled jobs of every partition and says how many', async () => {
    const queue = uniqueQueue('drain');
    await spread(queue, 6);
    await spread(queue, 3, { delayMs: 60_000 });
    expect(await suite.queues.drain(queue, { keepScheduled: true })).toBe(6);
    expect(await suite.queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 3, dead: 0 });
    expect(await suite.queues.drain(queue)).toBe(3);
    expect(await suite.queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });

  it('retries dead jobs of every partition, a limit counting over all of them', async () => {
    const queue = uniqueQueue('retryall');
    const ids = await spread(queue, 6);
    await kill(queue, ids);
    expect((await suite.queues.counts(queue)).dead).toBe(6);
    expect(await suite.queues.retryAll(queue, { limit: 4 })).toBe(4);
    expect(await suite.queues.counts(queue)).toMatchObject({ pending: 4, dead: 2 });
    expect(await suite.queues.retryAll(queue)).toBe(2);
    expect(await suite.queues.counts(queue)).toMatchObject({ pending: 6, dead: 0 });
  });

  it('cleans old jobs of every partition up to the limit', async () => {
    const queue = uniqueQueue('clean');
    const ids = await spread(queue, 6);
    await kill(queue, ids);
    // Older than 0 ms: minted before the server's current millisecond.
    const newest = Math.max(...ids.map((id) => JOB_IDS.parts(id)!.timeMs));
    for (let tries = 0; tries < 1_000 && (await serverNowMs(suite.redis)) <= newest; tries++);
    const first = await suite.queues.clean(queue, 'dead', { olderThanMs: 0, limit: 4 });
    expect(first).toHaveLength(4);
    const rest = await suite.queues.clean(queue, 'dead', { olderThanMs: 0 });
    expect([...first, ...rest].sort()).toEqual([...ids].sort());
    expect((await suite.queues.counts(queue)).dead).toBe(0);
    await expect(suite.queues.clean(queue, 'dead', { olderThanMs: -1 })).rejects.toThrow(
      InvalidArgumentError,
    );
  });

  it('obliterates every partition and the queue itself', async () => {
    const queue = uniqueQueue('obliterate');
    await spread(queue, 6);
    await suite.queues.upsertSchedule(queue, 'tick', { everyMs: 60_000 });
    expect(await suite.queues.obliterate(queue)).toEqual({ removed: 7 });
    // What is left is the trail: each stream (with its 'obliterated' event) and replay records.
    const left = await suite.redis.keys(`emq:{${queue}*`);
    expect(left.filter((key) => !/:(events|reply:.+)$/.test(key))).toEqual([]);
    expect(left.filter((key) => key.endsWith(':events')).sort()).toEqual(
      [queue, `${queue}#0`, `${queue}#1`, `${queue}#2`].map((name) => `emq:{${name}}:events`).sort(),
    );
    expect(await suite.queues.listQueues()).not.toContain(queue);
    // The queue is usable again afterwards, partitioned as before.
    expect(partitionTagOf(await suite.queues.enqueue(queue, 'again'))).toBeLessThan(PARTITIONS);
    expect((await suite.queues.counts(queue)).pending).toBe(1);
  });

  it('updates a job in its partition, but refuses to move it to another lane', async () => {
    const queue = uniqueQueue('update');
    const [id] = await spread(queue, 1);
    expect(await suite.queues.update(queue, id, { data: { n: 'changed' }, priority: 5 })).toBe('pending');
    expect(await suite.queues.getJob(queue, id)).toMatchObject({ data: { n: 'changed' }, priority: 5 });
    await expect(suite.queues.update(queue, id, { lane: 'elsewhere' })).rejects.toThrow(InvalidArgumentError);
    expect((await suite.queues.getJob(queue, id))?.lane).toBe('default');
  });
});
