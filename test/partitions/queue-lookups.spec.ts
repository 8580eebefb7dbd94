import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { JobNotFoundError, QueueService, failJob, partitionTagOf, type JobId } from '@app/echomq/internal';
import { claimSome } from '../support/claims';
import { openMonitor } from '../support/monitor';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

/**
 * Lookups by id go to the partition the id names. Each test runs under a key prefix of its
 * own, so no other suite's reaper touches these queues while MONITOR counts what was sent.
 */
describe('a partitioned queue finds a job by its id in its own partition', () => {
  let redis: Redis;
  let monitor: Redis;
  let prefix: string;
  let app: INestApplication;
  let queues: QueueService;
  const queue = uniqueQueue('look');

  beforeAll(async () => {
    redis = connect();
    monitor = await openMonitor();
    prefix = `lk-${randomBytes(4).toString('hex')}`;
    app = await bootApp([], { keyPrefix: prefix, queues: { [queue]: { partitions: 3 } } });
    queues = app.get(QueueService);
  });
  afterAll(async () => {
    monitor.disconnect();
    await app.close();
    await redis.quit();
  });

  /**
   * The commands `call` sent that name a key of `name` or its partitions (scripts' own commands
   * left out), each as the hashtag it names and the command. Redis shows commands in the order
   * it ran them, so what comes between two markers is what the call sent.
   */
  async function sentBy(
    call: () => Promise<unknown>,
    name = queue,
  ): Promise<{ tag: string; command: string }[]> {
    const marker = randomBytes(4).toString('hex');
    const seen: { tag: string; command: string }[] = [];
    let counting = false;
    const hashtag = new RegExp(`^${prefix}:\\{(${name}(?:#\\d+)?)\\}:`);
    const ended = new Promise<void>((resolve) => {
      const onLine = (_time: string, args: string[], source: string) => {
        const echoed = args[0]?.toLowerCase() === 'echo' ? args[1] : undefined;
        if (echoed === `start-${marker}`) counting = true;
        if (echoed === `end-${marker}`) {
          monitor.off('monitor', onLine);
          resolve();
        }
        if (!counting || echoed !== undefined || source === 'lua') return;
        const tags = new Set(args.flatMap((arg) => hashtag.exec(arg)?.[1] ?? []));
        for (const tag of tags) seen.push({ tag, command: args[0].toLowerCase() });
      };
      monitor.on('monitor', onLine);
    });
    await redis.echo(`start-${marker}`);
    await call();
    await redis.echo(`end-${marker}`);
    await ended;
    return seen;
  }

  /** Enqueues unpinned jobs until one lands in partition `tag`. */
  async function jobIn(
    tag: number,
    options: { delayMs?: number; maxAttempts?: number } = {},
  ): Promise<JobId> {
    for (;;) {
      const id = await queues.enqueue(queue, { tag }, options);
      if (partitionTagOf(id) === tag) return id;
    }
  }

  it('getJob reads one partition, the one the id names, in one command', async () => {
    const ids = [await jobIn(0), await jobIn(1), await jobIn(2)];
    await queues.getJob(queue, ids[0]); // loads the script, so what is counted is one EVALSHA
    for (const [tag, id] of ids.entries()) {
      let view: unknown;
      const sent = await sentBy(async () => (view = await queues.getJob(queue, id)));
      expect(view).toMatchObject({ id, queue, state: 'pending', data: { tag } });
      expect(sent).toEqual([{ tag: `${queue}#${tag}`, command: 'evalsha' }]);
    }
  });

  it('update, promote, remove and retry each send one script call, to the job partition only', async () => {
    const delayed = await jobIn(1, { delayMs: 60_000 });
    const update = await sentBy(() => queues.update(queue, delayed, { data: { changed: true } }));
    expect(update.map((each) => each.tag)).toEqual([`${queue}#1`]);
    const promote = await sentBy(() => queues.promote(queue, delayed));
    expect(promote.map((each) => each.tag)).toEqual([`${queue}#1`]);
    expect(await queues.getJob(queue, delayed)).toMatchObject({ state: 'pending', data: { changed: true } });
    const remove = await sentBy(() => queues.remove(queue, delayed));
    expect(remove.map((each) => each.tag)).toEqual([`${queue}#1`]);
    expect(await queues.getJob(queue, delayed)).toBeUndefined();

    const doomed = await jobIn(2, { maxAttempts: 1 });
    // The partition also holds the jobs that landed there before: claim them all.
    const claim = (await claimSome(queues.context(`${queue}#2`), 100)).find((each) => each.id === doomed)!;
    await failJob(queues.context(`${queue}#2`), claim, { error: 'x', backoffMs: 0, unrecoverable: false });
    expect((await queues.getJob(queue, doomed))?.state).toBe('dead');
    const retry = await sentBy(() => queues.retry(queue, doomed));
    expect(retry.map((each) => each.tag)).toEqual([`${queue}#2`]);
    expect((await queues.getJob(queue, doomed))?.state).toBe('pending');
  });

  it('reports an unknown id after asking at most its partition and the queue itself', async () => {
    const [unknown] = await queues.enqueueMany(`${queue}#1`, [{ data: 'elsewhere' }]);
    await queues.remove(`${queue}#1`, unknown);
    const sent = await sentBy(async () => expect(await queues.getJob(queue, unknown)).toBeUndefined());
    expect(sent.map((each) => each.tag)).toEqual([`${queue}#1`, queue]);
    await expect(queues.retry(queue, unknown)).rejects.toThrow(JobNotFoundError);
  });

  describe('a job enqueued before the queue was partitioned', () => {
    const old = uniqueQueue('old');
    let before: INestApplication;
    let after: INestApplication;
    let unpartitioned: QueueService;
    let partitioned: QueueService;

    beforeAll(async () => {
      before = await bootApp([], { keyPrefix: prefix });
      unpartitioned = before.get(QueueService);
      after = await bootApp([], { keyPrefix: prefix, queues: { [old]: { partitions: 3 } } });
      partitioned = after.get(QueueService);
    });
    afterAll(async () => {
      await before.close();
      await after.close();
    });

    /** Jobs of `old` itself, enqueued while no process declared partitions; at least one whose id names partition 0..2. */
    async function oldJobs(options: { delayMs?: number; maxAttempts?: number } = {}): Promise<JobId> {
      for (;;) {
        const id = await unpartitioned.enqueue(old, { old: true }, options);
        // An id that names one of the three partitions by chance: the lookup must not stop there.
        if (partitionTagOf(id)! < 3) return id;
        await unpartitioned.remove(old, id);
      }
    }

    it('is found, updated, promoted and removed through the partitioned queue', async () => {
      const id = await oldJobs({ delayMs: 60_000 });
      expect((await partitioned.partitionLayout(old)).count).toBe(3);
      const sent = await sentBy(
        async () =>
          expect(await partitioned.getJob(old, id)).toMatchObject({ id, queue: old, state: 'schedule' }),
        old,
      );
      expect(sent.map((each) => each.tag)).toEqual([`${old}#${partitionTagOf(id)}`, old]);
      expect(await partitioned.update(old, id, { data: { old: 'changed' } })).toBe('schedule');
      await partitioned.promote(old, id);
      expect(await partitioned.getJob(old, id)).toMatchObject({ state: 'pending', data: { old: 'changed' } });
      expect(await partitioned.remove(old, id)).toBe('pending');
      expect(await partitioned.getJob(old, id)).toBeUndefined();
    });

    it('is retried from dead through the partitioned queue', async () => {
      const id = await oldJobs({ maxAttempts: 1 });
      const ctx = unpartitioned.context(old);
      const claims = await claimSome(ctx, 10);
      const claim = claims.find((each) => each.id === id)!;
      await failJob(ctx, claim, { error: 'before', backoffMs: 0, unrecoverable: false });
      expect((await partitioned.getJob(old, id))?.state).toBe('dead');
      expect(await partitioned.browse(old, 'dead')).toContain(id);
      await partitioned.retry(old, id);
      expect((await partitioned.getJob(old, id))?.state).toBe('pending');
      expect(await partitioned.remove(old, id)).toBe('pending');
    });
  });
});
