import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService } from '@app/echomq';
import { discoverQueues } from '@app/echomq/doctor';
import { queueKeys, queueRegistryKey, type QueueKeys } from '@app/echomq/internal';
import { emq, emqJson, uniquePrefix } from '../cli/support/cli';
import { bootApp } from '../support/nest';
import { connect, uniqueQueue } from '../support/redis';
import { closeAll } from '../worker/fixtures/support';
import { checkOnly, doctor, dumpQueue, findingsOf } from './support/doctor';

/**
 * The queues doctor exists for are the ones the registry forgets: the reapers prune a queue
 * that looks idle (four empty sets, no event for a day), and a queue holding only orphan rows
 * looks exactly so. Each test has a key prefix of its own, so the every-queue form sees its
 * queues only.
 */
describe('emq doctor finds queues the registry does not name', () => {
  let redis: Redis;
  let apps: INestApplication[] = [];
  let prefix: string;
  let queues: QueueService;

  beforeAll(() => {
    redis = connect();
  });

  beforeEach(async () => {
    prefix = uniquePrefix();
    const app = await bootApp([], { keyPrefix: prefix, startProcessors: false, nodeId: 13 });
    apps.push(app);
    queues = app.get(QueueService);
  });

  afterEach(async () => {
    await closeAll(apps);
    apps = [];
  });

  afterAll(() => {
    redis?.disconnect();
  });

  /** A queue whose three jobs are rows outside every set, dropped from the registry as a reaper would. */
  async function orphansOnly(): Promise<{ queue: string; keys: QueueKeys; ids: string[] }> {
    const queue = uniqueQueue('lost');
    const keys = queueKeys(queue, prefix);
    const ids = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }, { data: 3 }]);
    await redis.zrem(keys.pending, ...ids);
    await redis.zrem(keys.ready(0), 'default');
    await redis.srem(queueRegistryKey(prefix), queue);
    expect(await queues.listQueues()).not.toContain(queue);
    return { queue, keys, ids };
  }

  it('checks a queue of orphan rows that the registry dropped, by name and in the every-queue form', async () => {
    const { queue, ids } = await orphansOnly();
    // Its format key, written on first use, still names it: the other commands know it too.
    expect((await emq(prefix, ['stats', queue])).code).toBe(0);

    const named = await checkOnly(redis, prefix, queue);
    expect(named.code).toBe(1);
    const [[kind, shown]] = findingsOf(named);
    expect([kind, [...shown].sort()]).toEqual(['orphan-row', [...ids].sort()]);

    const all = await doctor(prefix, undefined);
    expect(all.code).toBe(1);
    expect(all.report.queues.map((q) => q.queue)).toEqual([queue]);
    expect(all.report.queues[0].findings.map((f) => f.kind)).toEqual(['orphan-row']);

    expect((await doctor(prefix, undefined, '--repair')).code).toBe(0);
    expect((await queues.counts(queue)).pending).toBe(3);
  });

  it('finds by any key of it a queue whose format key is gone too, when named: only the doctor scans for one', async () => {
    const { queue, keys } = await orphansOnly();
    await redis.del(keys.format, keys.metrics, keys.events);

    const stats = await emq(prefix, ['stats', queue]);
    expect(stats.code).toBe(1);
    expect(stats.stderr).toMatch(
      /^emq: UNKNOWN_QUEUE: Queue '[^']+' is not known under key prefix '[^']+': it is not in the registry and has no format key, no jobs and no pause \(no queue is registered/,
    );
    const named = await checkOnly(redis, prefix, queue);
    expect(named.code).toBe(1);
    expect(findingsOf(named).map(([kind]) => kind)).toEqual(['orphan-row']);
    // Discovery reads format keys only: this queue is found by name, not by the every-queue form.
    expect(await discoverQueues(redis, prefix)).toEqual([]);

    await redis.del(...Object.keys(await dumpQueue(redis, keys)));
    const none = await emq(prefix, ['doctor', queue]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain(`it is not in the registry and no key under '${keys.base}' exists`);
  });

  it('skips a registry entry that is no queue name and lists it as not checked (exit 3); stats leaves it out', async () => {
    const queue = uniqueQueue('fine');
    await queues.enqueue(queue, 1);
    await redis.sadd(queueRegistryKey(prefix), 'bad{name}');

    const all = await doctor(prefix, undefined);
    expect(all.code).toBe(3);
    expect(all.report).toMatchObject({ complete: false, healthy: false });
    expect(all.report.queues).toEqual([
      expect.objectContaining({ queue, checked: true, findings: [] }),
      expect.objectContaining({
        queue: 'bad{name}',
        checked: false,
        unchecked: [{ check: 'every check', reason: expect.stringContaining('no queue name') }],
      }),
    ]);
    const text = await emq(prefix, ['doctor']);
    expect(text.code).toBe(3);
    expect(text.stdout).toContain('"bad{name}": not checked: a registry entry that is no queue name');

    const stats = await emqJson<{ queues: { queue: string }[]; skipped: string[] }>(prefix, ['stats']);
    expect(stats.queues.map((q) => q.queue)).toEqual([queue]);
    expect(stats.skipped).toEqual(['bad{name}']);
  });
});
