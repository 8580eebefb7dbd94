import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, enqueueJobs, extendLeases, queueKeys } from '@app/echomq/internal';
import { claimSome } from '../support/claims';
import { bootApp } from '../support/nest';
import { connect, idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { events, jobRecord, metrics } from '../support/assertions';
import { closeAll, deferred, processorClass, waitUntil } from '../worker/fixtures/support';

/** Heartbeats leave no entry on the capped stream, so they cannot push completions out of it. */
describe('retention: heartbeats stay off the event stream', () => {
  let redis: Redis;
  const apps: INestApplication[] = [];
  const mint = idMinter(31);

  beforeAll(() => {
    redis = connect();
  });
  afterEach(async () => {
    await closeAll(apps.splice(0));
  });
  afterAll(async () => {
    await redis.quit();
  });

  it('extend moves deadlines and counts them in metrics, writing no event', async () => {
    const ctx = scriptContext(redis, uniqueQueue('beat'));
    await enqueueJobs(ctx, [jobRecord(mint()), jobRecord(mint())], 60_000);
    const jobs = await claimSome(ctx, 2, 5_000);
    const before = await events(redis, ctx.keys);
    const outcome = await extendLeases(ctx, jobs, 60_000);
    expect(outcome.held).toEqual([true, true]);
    expect(Number(await redis.zscore(ctx.keys.active, jobs[0].id))).toBe(outcome.leaseDeadline);
    expect(await events(redis, ctx.keys)).toEqual(before);
    expect(await metrics(redis, ctx.keys)).toMatchObject({ extended: 2 });
  });

  it('a worker whose heartbeats ran leaves only enqueue, claim and completion entries', async () => {
    const queue = uniqueQueue('beat');
    const gate = deferred();
    const Worker = processorClass(queue, { concurrency: 5, leaseMs: 1_000 }, async () => {
      await gate.promise;
      return 'ok';
    });
    const app = await bootApp([Worker]);
    apps.push(app);
    const queues = app.get(QueueService);
    await queues.enqueueMany(
      queue,
      Array.from({ length: 5 }, (_, n) => ({ data: n })),
    );
    // Heartbeats run every lease/3; wait until some have extended the five leases.
    await waitUntil(
      async () => ((await queues.metrics(queue)).extended ?? 0) >= 10,
      'two heartbeats',
      10_000,
    );
    gate.resolve();
    await waitUntil(
      async () => (await queues.metrics(queue)).completed === 5,
      'all five to complete',
      10_000,
    );
    const types = new Set((await events(redis, queueKeys(queue))).map((event) => event.fields.type));
    expect(types.has('extended')).toBe(false);
    expect([...types].sort()).toEqual(['claimed', 'completed', 'enqueued']);
    expect((await queues.recentCompleted(queue)).length).toBe(5);
  });
});
