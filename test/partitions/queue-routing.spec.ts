import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import {
  InvalidArgumentError,
  PayloadTooLargeError,
  QueueService,
  partitionTagOf,
  queueKeys,
  type JobId,
  type JobToEnqueue,
} from '@app/echomq/internal';
import { bucketOf } from '@app/echomq/queue/partitions/partition-routing';
import { claimSome } from '../support/claims';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';
import { usePartitionedApp } from './support/partitioned-app';
import { laneIn } from './support/lanes';
import { partitionNames } from './support/physical';

const PARTITIONS = 3;

/** The physical queues (of q and its partitions) whose rows hold job `id`. */
async function holders(redis: Redis, queue: string, id: string): Promise<string[]> {
  const physical = [queue, ...partitionNames(queue, PARTITIONS)];
  const found = await Promise.all(physical.map((name) => redis.exists(queueKeys(name).job(id))));
  return physical.filter((_, index) => found[index] === 1);
}

/** Lane names whose partitions (of PARTITIONS) are `wanted`, in that order. */
function lanesIn(wanted: readonly number[]): string[] {
  return wanted.map((partition) => laneIn(partition, PARTITIONS, `tenant-${partition}`));
}

/** Every key under a queue's hashtags: its own and its partitions'. */
async function keysOf(redis: Redis, queue: string): Promise<string[]> {
  const [own, parts] = await Promise.all([redis.keys(`emq:{${queue}}:*`), redis.keys(`emq:{${queue}#*`)]);
  return [...own, ...parts];
}

describe('a partitioned queue routes each job to one partition', () => {
  // Every queue this application uses is declared with three partitions.
  const suite = usePartitionedApp({ defaults: { partitions: PARTITIONS }, maxPayloadBytes: 1_024 });

  it("keeps one lane's jobs in the partition its name hashes to, in FIFO order there", async () => {
    const queue = uniqueQueue('lane');
    const [lane] = lanesIn([2]);
    const ids: JobId[] = [];
    for (let n = 0; n < 6; n++) ids.push(await suite.queues.enqueue(queue, { n }, { lane }));
    ids.push(
      ...(await suite.queues.enqueueMany(
        queue,
        [3, 4, 5].map((n) => ({ data: { n: n + 3 }, lane })),
      )),
    );
    for (const id of ids) {
      expect(partitionTagOf(id)).toBe(2);
      expect(await holders(suite.redis, queue, id)).toEqual([`${queue}#2`]);
    }
    expect(await suite.redis.zcard(queueKeys(`${queue}#2`).pending)).toBe(0); // a lane's jobs wait in its own set
    expect(await suite.queues.browse(queue, 'pending', { lane })).toEqual([...ids].reverse());
    // Claimed from its partition, the lane gives its jobs in the order they were enqueued.
    const claimed = await claimSome(suite.queues.context(`${queue}#2`), ids.length);
    expect(claimed.map((job) => job.id)).toEqual(ids);
  });

  it('sends jobs with neither lane nor key to the partitions in turn, one pick per call', async () => {
    const queue = uniqueQueue('turns');
    const tags: number[] = [];
    for (let n = 0; n < 6; n++) tags.push(partitionTagOf(await suite.queues.enqueue(queue, { n }))!);
    for (let i = 1; i < tags.length; i++) expect(tags[i]).toBe((tags[i - 1] + 1) % PARTITIONS);
    expect(new Set(tags).size).toBe(PARTITIONS);
    const counts = await Promise.all(
      [0, 1, 2].map((k) => suite.redis.zcard(queueKeys(`${queue}#${k}`).pending)),
    );
    expect(counts).toEqual([2, 2, 2]);
    expect(await suite.redis.exists(queueKeys(queue).pending)).toBe(0);
  });

  it('sends an enqueueMany of unpinned jobs whole to one partition', async () => {
    const queue = uniqueQueue('many');
    const ids = await suite.queues.enqueueMany(
      queue,
      Array.from({ length: 10 }, (_, n) => ({ data: { n } })),
    );
    const tags = new Set(ids.map((id) => partitionTagOf(id)));
    expect(tags.size).toBe(1);
    const [tag] = tags;
    expect(await suite.redis.zcard(queueKeys(`${queue}#${tag}`).pending)).toBe(10);
    expect((await suite.queues.counts(queue)).pending).toBe(10);
  });

  it('splits a batch of several lanes by partition and gives the ids back in input order', async () => {
    const queue = uniqueQueue('split');
    const [a, b, c] = lanesIn([0, 1, 2]);
    const lanes = [c, a, b, a, c, b, undefined, a];
    const ids = await suite.queues.enqueueMany(
      queue,
      lanes.map((lane, n) => ({ data: { n }, ...(lane ? { lane } : {}) })),
    );
    expect(ids).toHaveLength(lanes.length);
    for (const [n, id] of ids.entries()) {
      const view = await suite.queues.getJob<{ n: number }>(queue, id);
      expect(view?.data).toEqual({ n });
      const lane = lanes[n];
      if (lane !== undefined) expect(partitionTagOf(id)).toBe(bucketOf(`lane:${lane}`, PARTITIONS));
      expect(await holders(suite.redis, queue, id)).toEqual([`${queue}#${partitionTagOf(id)}`]);
    }
    expect((await suite.queues.counts(queue)).pending).toBe(lanes.length);
  });

  it('writes nothing in any partition when one item of a split batch is bad', async () => {
    const queue = uniqueQueue('bad');
    const [a, b, c] = lanesIn([0, 1, 2]);
    const good: JobToEnqueue<unknown>[] = [
      { data: 1, lane: a },
      { data: 2, lane: b },
      { data: 3, lane: c },
    ];
    // An option refused in the batch check, at the start, the middle and the end.
    for (const at of [0, 1, 3]) {
      const jobs = [...good];
      jobs.splice(at, 0, { data: 'x', lane: b, maxAttempts: 0 });
      await expect(suite.queues.enqueueMany(queue, jobs)).rejects.toThrow(InvalidArgumentError);
    }
    // A payload refused when its partition's records are built: the last partition's, after the
    // others were built.
    const oversized = [...good, { data: 'y'.repeat(2_000), lane: c }];
    await expect(suite.queues.enqueueMany(queue, oversized)).rejects.toThrow(PayloadTooLargeError);
    expect(await keysOf(suite.redis, queue)).toEqual([]);
    expect(await suite.queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    // The same batch without the bad item goes through.
    expect(await suite.queues.enqueueMany(queue, good)).toHaveLength(3);
    expect((await suite.queues.counts(queue)).pending).toBe(3);
  });

  describe('a key hashes to one partition, whichever process enqueues it', () => {
    let undeclaring: INestApplication;
    let other: QueueService;

    afterEach(async () => {
      await undeclaring?.close();
    });

    /** A second application that declares no partitions: it reads them from the registry. */
    async function second(): Promise<QueueService> {
      undeclaring = await bootApp([]);
      other = undeclaring.get(QueueService);
      return other;
    }

    it('idempotency key: the second enqueue, from the other application, returns the first id', async () => {
      const queue = uniqueQueue('idem');
      const first = await suite.queues.enqueue(queue, { from: 'declaring' }, { idempotencyKey: 'order-1' });
      const peer = await second();
      expect(peer.queueOptions(queue).partitions).toBeUndefined();
      expect((await peer.partitionLayout(queue)).count).toBe(PARTITIONS);
      expect(await peer.enqueue(queue, { from: 'undeclaring' }, { idempotencyKey: 'order-1' })).toBe(first);
      expect(partitionTagOf(first)).toBe(bucketOf('key:order-1', PARTITIONS));
      // And the other way round, with a key the undeclaring one uses first.
      const second2 = await peer.submit(queue, { from: 'undeclaring' }, { idempotencyKey: 'order-2' });
      expect(second2.outcome).toBe('created');
      expect(await suite.queues.submit(queue, 2, { idempotencyKey: 'order-2' })).toEqual({
        id: second2.id,
        outcome: 'matched',
      });
      expect(partitionTagOf(second2.id)).toBe(bucketOf('key:order-2', PARTITIONS));
      expect((await suite.queues.counts(queue)).pending).toBe(2);
      expect((await suite.queues.getJob(queue, first))?.data).toEqual({ from: 'declaring' });
    });

    it('debounce key: the undeclaring application replaces the waiting job in its partition', async () => {
      const queue = uniqueQueue('debounce');
      const debounce = { key: 'user-7', delayMs: 60_000 };
      const first = await suite.queues.submit(queue, { v: 1 }, { debounce });
      expect(first.outcome).toBe('created');
      const peer = await second();
      const again = await peer.submit(queue, { v: 2 }, { debounce });
      expect(again).toEqual({ id: first.id, outcome: 'replaced' });
      expect(partitionTagOf(first.id)).toBe(bucketOf('key:user-7', PARTITIONS));
      expect(await holders(suite.redis, queue, first.id)).toEqual([`${queue}#${partitionTagOf(first.id)}`]);
      expect((await suite.queues.getJob(queue, first.id))?.data).toEqual({ v: 2 });
      expect((await suite.queues.counts(queue)).schedule).toBe(1);
    });

    it('throttle key: the undeclaring application matches the window of the first', async () => {
      const queue = uniqueQueue('throttle');
      const throttle = { key: 'report', windowMs: 60_000 };
      const first = await suite.queues.submit(queue, { v: 1 }, { throttle });
      const peer = await second();
      expect(await peer.submit(queue, { v: 2 }, { throttle })).toEqual({ id: first.id, outcome: 'matched' });
      expect(partitionTagOf(first.id)).toBe(bucketOf('key:report', PARTITIONS));
      expect((await suite.queues.counts(queue)).pending).toBe(1);
    });
  });
});
