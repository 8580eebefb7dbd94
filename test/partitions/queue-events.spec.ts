import type { INestApplication } from '@nestjs/common';
import {
  JobFailedError,
  QueueService,
  completeJob,
  failJob,
  partitionTagOf,
  type ClaimedJobRecord,
  type JobId,
  type QueueEvent,
} from '@app/echomq/internal';
import { claimSome } from '../support/claims';
import { bootApp } from '../support/nest';
import { uniqueQueue } from '../support/redis';

/** Every event a listener got, and a way to await the first that matches (bounded). */
function eventLog() {
  const seen: QueueEvent[] = [];
  const waiters: { match: (event: QueueEvent) => boolean; resolve: () => void }[] = [];
  return {
    seen,
    listener(event: QueueEvent): void {
      seen.push(event);
      for (const waiter of waiters.filter((each) => each.match(event))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    },
    until(match: (event: QueueEvent) => boolean, ms = 5_000): Promise<void> {
      if (seen.some(match)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no matching event within ${ms} ms`)), ms);
        waiters.push({
          match,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      });
    },
  };
}

describe('events of a partitioned queue', () => {
  const queue = uniqueQueue('events');
  let unpartitioned: INestApplication;
  let partitioned: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    unpartitioned = await bootApp([]);
    partitioned = await bootApp([], { queues: { [queue]: { partitions: 3 } } });
    queues = partitioned.get(QueueService);
  });
  afterAll(async () => {
    await partitioned.close();
    await unpartitioned.close();
  });

  /** Claims job `id` from the physical queue `physical` and completes it with `result`. */
  async function complete(physical: string, id: string, result: unknown): Promise<void> {
    const ctx = queues.context(physical);
    const claim = (await claimSome(ctx, 100)).find((each) => each.id === id);
    if (!claim) throw new Error(`${id} was not claimable in ${physical}`);
    await completeJob(ctx, claim, JSON.stringify(result), 0);
  }

  it('subscribe gets the events of every partition', async () => {
    const log = eventLog();
    const stop = await queues.subscribe(queue, (event) => log.listener(event));
    try {
      const ids: JobId[] = [];
      for (let n = 0; n < 3; n++) ids.push(await queues.enqueue(queue, { n }));
      expect(new Set(ids.map(partitionTagOf))).toEqual(new Set([0, 1, 2]));
      for (const id of ids) await complete(`${queue}#${partitionTagOf(id)}`, id, 'ok');
      for (const id of ids) {
        await log.until((event) => event.type === 'completed' && event.ids.includes(id));
        await log.until((event) => event.type === 'enqueued' && event.ids.includes(id));
      }
    } finally {
      stop();
    }
  });

  it('waitFor resolves with the result of a job in partition 2', async () => {
    let id: JobId;
    do id = await queues.enqueue(queue, { wanted: 2 });
    while (partitionTagOf(id) !== 2);
    const result = queues.waitFor(queue, id, 10_000);
    await complete(`${queue}#2`, id, { done: 'in #2' });
    await expect(result).resolves.toEqual({ done: 'in #2' });
  });

  it('waitFor resolves for a job of partition 2 that completed just before the wait began', async () => {
    let id: JobId;
    do id = await queues.enqueue(queue, { wanted: 2 });
    while (partitionTagOf(id) !== 2);
    // No row is kept: only the partition's stream still tells the outcome.
    await complete(`${queue}#2`, id, 'already done');
    await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('already done');
  });

  describe('a job from before the queue was partitioned, in the queue itself', () => {
    const old = uniqueQueue('events-old');
    let declared: INestApplication;
    let before: QueueService;
    let after: QueueService;

    beforeAll(async () => {
      before = unpartitioned.get(QueueService);
      declared = await bootApp([], { queues: { [old]: { partitions: 3 } } });
      after = declared.get(QueueService);
    });
    afterAll(async () => {
      await declared.close();
    });

    /**
     * A job enqueued while no process declared partitions, with an id that names partition
     * 0..2 by chance, so the wait cannot settle for the partition the id names; claimed.
     */
    async function oldClaimed(): Promise<ClaimedJobRecord> {
      let id: JobId;
      do id = await before.enqueue(old, { old: true }, { maxAttempts: 1 });
      while (partitionTagOf(id)! >= 3);
      const claim = (await claimSome(before.context(old), 100)).find((each) => each.id === id)!;
      expect((await after.getJob(old, id))?.state).toBe('active');
      return claim;
    }

    it('waitFor resolves while it runs and completes', async () => {
      const claim = await oldClaimed();
      const result = after.waitFor(old, claim.id, 10_000);
      await completeJob(before.context(old), claim, JSON.stringify('old done'), 0);
      await expect(result).resolves.toBe('old done');
    });

    it('waitFor resolves for one that completed just before the wait began', async () => {
      const claim = await oldClaimed();
      // No row is kept: only the stream of the queue itself still tells the outcome.
      await completeJob(before.context(old), claim, JSON.stringify('done before'), 0);
      await expect(after.waitFor(old, claim.id, 10_000)).resolves.toBe('done before');
    });

    it('waitFor rejects for one that went dead', async () => {
      const claim = await oldClaimed();
      const failure = after.waitFor(old, claim.id, 10_000);
      await failJob(before.context(old), claim, { error: 'old failed', backoffMs: 0, unrecoverable: false });
      await expect(failure).rejects.toThrow(JobFailedError);
      await expect(after.waitFor(old, claim.id, 10_000)).rejects.toThrow(/old failed/);
    });
  });

  it('a subscription follows the partitions a raised count adds later', async () => {
    const grown = uniqueQueue('grown');
    const two = await bootApp([], { queues: { [grown]: { partitions: 2 } } });
    let four: INestApplication | undefined;
    try {
      await two.get(QueueService).enqueue(grown, { before: true }); // records 2 in the registry
      const log = eventLog();
      // The subscriber declares nothing: it reads the registry, which says 2 partitions now.
      const stop = await unpartitioned.get(QueueService).subscribe(grown, (event) => log.listener(event));
      try {
        four = await bootApp([], { queues: { [grown]: { partitions: 4 } } });
        const producer = four.get(QueueService);
        // Partition #3 did not exist when the subscription began. A subscription sees events from
        // when it follows a stream, so keep adding jobs there until one is seen (the subscriber
        // reads the registry, and looks for new partitions, every 5 s).
        const sent = new Set<string>();
        const seen = () =>
          log.seen.some((event) => event.type === 'enqueued' && event.ids.some((id) => sent.has(id)));
        for (const deadline = Date.now() + 20_000; !seen() && Date.now() < deadline;) {
          const id = await producer.enqueue(grown, { after: true });
          if (partitionTagOf(id) === 3) sent.add(id);
          await log.until(() => seen(), 250).catch(() => undefined);
        }
        expect(seen()).toBe(true);
        expect(log.seen.every((event) => event.ids.every((id) => partitionTagOf(id)! < 4))).toBe(true);
      } finally {
        stop();
      }
    } finally {
      await four?.close();
      await two.close();
    }
  }, 30_000);
});
