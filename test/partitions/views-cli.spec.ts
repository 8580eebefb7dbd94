import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService } from '@app/echomq';
import { discoverQueues } from '@app/echomq/doctor';
import {
  claimJobs,
  failJob,
  partitionQueueName,
  partitionTagOf,
  queueKeys,
  queueRegistryKey,
} from '@app/echomq/internal';
import { emq, emqJson, uniquePrefix } from '../cli/support/cli';
import { doctor } from '../doctor/support/doctor';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';

interface StatsJson {
  queues: {
    queue: string;
    counts: Record<'pending' | 'active' | 'schedule' | 'dead', number>;
    paused: boolean;
    partitions?: { queue: string; counts: Record<string, number>; paused: boolean; draining: boolean }[];
  }[];
}

/**
 * The command line on a partitioned queue: stats, browse, job, retry, remove and pause take the
 * queue's own name and act on all of it; the doctor checks each partition as the queue it is in
 * Redis, by its own name. Each test has a key prefix and a queue of its own.
 */
describe('emq on a partitioned queue', () => {
  let redis: Redis;
  let app: INestApplication;
  let queues: QueueService;
  let prefix: string;
  let queue: string;
  /** One job in each partition, in partition order. */
  let ids: string[];

  beforeAll(() => {
    redis = connect();
  });
  afterAll(async () => {
    await redis.quit();
  });

  beforeEach(async () => {
    prefix = uniquePrefix();
    queue = uniqueQueue('spread');
    app = await bootApp([], {
      keyPrefix: prefix,
      startProcessors: false,
      nodeId: 31,
      queues: { [queue]: { partitions: 3 } },
    });
    queues = app.get(QueueService);
    // Unpinned calls take the partitions in turn: three calls, one job in each.
    const minted = [];
    for (let n = 0; n < 3; n++) minted.push(await queues.enqueue(queue, { n }));
    ids = [...minted].sort((a, b) => (partitionTagOf(a) ?? 0) - (partitionTagOf(b) ?? 0));
    expect(ids.map((id) => partitionTagOf(id))).toEqual([0, 1, 2]);
  });
  afterEach(async () => {
    await app.close();
  });

  it('stats: the totals under the queue name, and a line per partition when it is named', async () => {
    await queues.enqueue(queue, { later: true }, { delayMs: 600_000 });
    const all = await emqJson<StatsJson>(prefix, ['stats']);
    expect(all.queues.map((q) => q.queue)).toEqual([queue]);
    expect(all.queues[0].counts).toEqual({ pending: 3, active: 0, schedule: 1, dead: 0 });
    expect(all.queues[0].partitions).toBeUndefined();

    const one = await emqJson<StatsJson>(prefix, ['stats', queue]);
    const [stats] = one.queues;
    expect(stats.counts).toEqual({ pending: 3, active: 0, schedule: 1, dead: 0 });
    // The queue itself holds nothing (it was partitioned from its first job): not listed.
    expect(stats.partitions?.map((p) => p.queue)).toEqual([0, 1, 2].map((k) => partitionQueueName(queue, k)));
    expect(stats.partitions?.map((p) => p.counts.pending)).toEqual([1, 1, 1]);
    expect(stats.partitions?.reduce((sum, p) => sum + p.counts.schedule, 0)).toBe(1);
    expect(stats.partitions?.every((p) => !p.draining && !p.paused)).toBe(true);

    const text = await emq(prefix, ['stats', queue], { tty: true });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('partition');
    for (const k of [0, 1, 2]) expect(text.stdout).toContain(partitionQueueName(queue, k));
  });

  it('stats of one partition by its own name: that partition alone', async () => {
    const {
      queues: [stats],
    } = await emqJson<StatsJson>(prefix, ['stats', partitionQueueName(queue, 1)]);
    expect(stats.queue).toBe(partitionQueueName(queue, 1));
    expect(stats.counts.pending).toBe(1);
    expect(stats.partitions).toBeUndefined();
  });

  it('stats still knows the queue once the reapers dropped every partition from the registry', async () => {
    const registry = queueRegistryKey(prefix);
    await redis.srem(registry, ...[0, 1, 2].map((k) => partitionQueueName(queue, k)));
    // The format keys would say it too; without them only the partitions registry does.
    for (const k of [0, 1, 2]) await redis.del(queueKeys(partitionQueueName(queue, k), prefix).format);
    await queues.drain(queue);
    const result = await emq(prefix, ['stats', queue, '--json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('browse lists every partition, newest first, each job with its view', async () => {
    const page = await emqJson<{ jobs: { id: string; queue: string }[]; next: string | null }>(prefix, [
      'browse',
      queue,
      'pending',
    ]);
    expect(page.jobs.map((job) => job.id)).toEqual([...ids].sort().reverse());
    expect(page.jobs.every((job) => job.queue === queue)).toBe(true);

    const first = await emqJson<{ jobs: { id: string }[]; next: string | null }>(prefix, [
      'browse',
      queue,
      'pending',
      '--limit',
      '2',
    ]);
    expect(first.next).not.toBeNull();
    const rest = await emqJson<{ jobs: { id: string }[] }>(prefix, [
      'browse',
      queue,
      'pending',
      '--limit',
      '2',
      '--after',
      first.next ?? '',
    ]);
    expect([...first.jobs, ...rest.jobs].map((job) => job.id)).toEqual([...ids].sort().reverse());
  });

  it('job, retry and remove find a job of any partition by the queue name', async () => {
    const job = await emqJson<{ id: string; state: string; queue: string }>(prefix, ['job', queue, ids[2]]);
    expect(job).toMatchObject({ id: ids[2], state: 'pending', queue });

    // The job of partition 1 dies, and comes back by the queue's name.
    const ctx = queues.context(partitionQueueName(queue, 1));
    const [claimed] = (await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: 'cli-p' })).jobs;
    expect(claimed.id).toBe(ids[1]);
    await failJob(ctx, claimed, { error: 'Error: boom', backoffMs: 0, unrecoverable: true });
    expect((await queues.getJob(queue, ids[1]))?.state).toBe('dead');
    expect(await emqJson(prefix, ['retry', queue, ids[1]])).toEqual({ queue, retried: 1, id: ids[1] });
    expect((await queues.getJob(queue, ids[1]))?.state).toBe('pending');

    expect(await emqJson(prefix, ['remove', queue, ids[0]])).toMatchObject({ removedFrom: 'pending' });
    expect(await queues.getJob(queue, ids[0])).toBeUndefined();
    expect((await queues.counts(queue)).pending).toBe(2);
  });

  it('pause and resume act on every partition', async () => {
    await emqJson(prefix, ['pause', queue]);
    for (const k of [0, 1, 2]) expect(await queues.isPaused(partitionQueueName(queue, k))).toBe(true);
    await emqJson(prefix, ['resume', queue]);
    for (const k of [0, 1, 2]) expect(await queues.isPaused(partitionQueueName(queue, k))).toBe(false);
  });

  it('doctor checks each partition by its physical name, and finds what is wrong in one of them', async () => {
    const healthy = await doctor(prefix, undefined);
    expect(healthy.code).toBe(0);
    const physical = [0, 1, 2].map((k) => partitionQueueName(queue, k));
    expect(healthy.report.queues.map((q) => q.queue)).toEqual(physical);
    expect(healthy.report.queues.every((q) => q.checked && q.scanned.rows === 1)).toBe(true);
    expect(await discoverQueues(redis, prefix)).toEqual(physical);

    // An orphan row in partition 1: its pending set and ready index no longer name it.
    const keys = queueKeys(physical[1], prefix);
    await redis.zrem(keys.pending, ids[1]);
    await redis.zrem(keys.ready(0), 'default');

    const every = await doctor(prefix, undefined);
    expect(every.code).toBe(1);
    const found = every.report.queues.filter((q) => q.findings.length > 0);
    expect(found.map((q) => [q.queue, q.findings.map((f) => [f.kind, f.ids])])).toEqual([
      [physical[1], [['orphan-row', [ids[1]]]]],
    ]);

    // Named by the queue's name: its partitions (the queue itself never held a job, so no keys).
    const named = await doctor(prefix, queue);
    expect(named.code).toBe(1);
    expect(named.report.queues.map((q) => q.queue)).toEqual(physical);

    // One partition by its own name: that one alone, and repaired.
    const repaired = await doctor(prefix, physical[1], '--repair');
    expect(repaired.report.queues.map((q) => q.queue)).toEqual([physical[1]]);
    expect(repaired.code).toBe(0);
    expect((await queues.counts(queue)).pending).toBe(3);
    expect((await doctor(prefix, queue)).code).toBe(0);
  });
});
