import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, completeJob } from '@app/echomq/internal';
import { claimSome } from '../support/claims';
import { openMonitor } from '../support/monitor';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

describe('an unpartitioned queue is unchanged', () => {
  let redis: Redis;
  let monitor: Redis;
  let app: INestApplication;

  beforeAll(async () => {
    redis = connect();
    monitor = await openMonitor();
  });
  afterAll(async () => {
    monitor.disconnect();
    await app?.close();
    await redis.quit();
  });

  it('never touches a partition key', async () => {
    // A key prefix of its own: no other suite's reaper reads these queues while MONITOR watches.
    const prefix = `up-${randomBytes(4).toString('hex')}`;
    const queue = uniqueQueue('plain');
    const touched: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      for (const arg of args) if (arg.startsWith(`${prefix}:`)) touched.push(arg);
    });
    app = await bootApp([], { keyPrefix: prefix, queues: { [queue]: { globalConcurrency: 5 } } });
    const queues = app.get(QueueService);
    expect(await queues.partitionLayout(queue)).toEqual({
      queue,
      count: 1,
      physical: [queue],
      partitioned: false,
    });
    const id = await queues.enqueue(queue, { n: 1 });
    const [lane, keyed] = await queues.enqueueMany(queue, [
      { data: 2, lane: 'tenant' },
      { data: 3, idempotencyKey: 'k' },
    ]);
    await queues.submit(queue, 4, { debounce: { key: 'd', delayMs: 60_000 } });
    expect(await queues.getJob(queue, id)).toMatchObject({ queue, state: 'pending' });
    expect(await queues.browse(queue, 'pending')).toEqual(expect.arrayContaining([id, lane, keyed]));
    expect((await queues.counts(queue)).pending).toBe(3);
    await queues.listJobs(queue, 'schedule');
    await queues.metrics(queue);
    await queues.lanes(queue);
    await queues.pause(queue);
    expect(await queues.isPaused(queue)).toBe(true);
    await queues.resume(queue);
    await queues.setLimits(queue, { globalConcurrency: 2 });
    expect((await queues.getLimits(queue)).globalConcurrency).toBe(2);
    await queues.upsertSchedule(queue, 's', { everyMs: 60_000 });
    expect(await queues.listSchedules(queue)).toHaveLength(1);
    const stop = await queues.subscribe(queue, () => undefined);
    const [claim] = await claimSome(queues.context(queue));
    const done = queues.waitFor(queue, claim.id, 5_000);
    await completeJob(queues.context(queue), claim, JSON.stringify('ok'), 0);
    await done;
    stop();
    await queues.update(queue, keyed, { data: 'changed' });
    await queues.remove(queue, keyed);
    await queues.recentCompleted(queue);
    // Redis has run every command sent before this one, and MONITOR shows them in that order.
    const marker = `end-${prefix}`;
    const ended = new Promise<void>((resolve) =>
      monitor.on('monitor', (_time: string, args: string[]) => args.includes(marker) && resolve()),
    );
    await redis.echo(marker);
    await ended;

    expect(touched.some((key) => key.startsWith(`${prefix}:{${queue}}:`))).toBe(true);
    expect(touched.filter((key) => key.includes(`{${queue}#`))).toEqual([]);
    expect(touched.filter((key) => key.includes('#'))).toEqual([]);
  });
});
