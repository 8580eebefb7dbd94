import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { Processor, QueueService, type Job, type QueueEvent } from '@app/echomq';
import { Reaper } from '@app/echomq/internal';
import { aclArguments, unexpectedRefusalsOf, urlAs } from '../security/support/acl';
import {
  aborted,
  AclProcessor,
  gates,
  QUEUE,
  SCHEDULED,
  scheduledRuns,
  ScheduledProcessor,
} from '../security/support/worker-acl-processors';
import { bootApp } from '../support/nest';
import { waitUntil, withTimeout } from '../worker/fixtures/support';
import { connect, uniqueQueue } from '../support/redis';

const tag = randomBytes(4).toString('hex');
const PREFIX = `acl-${tag}`;

describe('a worker under an ACL user scoped to its key prefix', () => {
  const user = `emq-worker-${tag}`;
  const password = randomBytes(12).toString('hex');
  let admin: Redis;
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    admin = connect();
    await admin.call('ACL', 'SETUSER', ...aclArguments('emq-worker', user, password, PREFIX));
    // No nodeId: the node number is leased under the prefix, with the user's rights.
    app = await bootApp([AclProcessor, ScheduledProcessor], {
      connection: { url: urlAs(user, password) },
      keyPrefix: PREFIX,
      reaper: { intervalMs: 100, batch: 1 },
    });
    queues = app.get(QueueService);
  });

  afterAll(async () => {
    aborted.resolveAll();
    gates.forEach((open) => open());
    await app?.close();
    await admin.call('ACL', 'DELUSER', user);
    await admin.quit();
  });

  it('runs every transition, read and admin call with the documented rights only', async () => {
    const events: QueueEvent[] = [];
    const unsubscribe = await queues.subscribe(QUEUE, (event) => {
      events.push(event);
    });
    try {
      const plain = await queues.enqueue(QUEUE, { kind: 'plain' }, { idempotencyKey: `k-${tag}` });
      expect(await queues.enqueue(QUEUE, { kind: 'plain' }, { idempotencyKey: `k-${tag}` })).toBe(plain);
      const flaky = await queues.enqueue(QUEUE, { kind: 'flaky' });
      const slow = await queues.enqueue(QUEUE, { kind: 'slow' });
      const doom = await queues.enqueue(QUEUE, { kind: 'doom' }, { delayMs: 50 });
      const later = await queues.enqueue(QUEUE, { kind: 'plain' }, { delayMs: 3_600_000 });
      // Heartbeats leave no event; the metrics counter shows one happened.
      await waitUntil(
        async () => gates.has(slow) && ((await queues.metrics(QUEUE)).extended ?? 0) > 0,
        'a heartbeat of the slow job',
      );
      gates.get(slow)?.();

      await expect(queues.waitFor(QUEUE, plain, 10_000)).resolves.toBe('ok');
      await expect(queues.waitFor(QUEUE, flaky, 10_000)).resolves.toBe('recovered');
      await expect(queues.waitFor(QUEUE, slow, 10_000)).resolves.toBe('extended');
      await expect(queues.waitFor(QUEUE, doom, 10_000)).rejects.toThrow('doomed');

      expect(await queues.counts(QUEUE)).toEqual({ pending: 0, active: 0, schedule: 1, dead: 1 });
      expect(await queues.browse(QUEUE, 'dead')).toEqual([doom]);
      expect(await queues.browse(QUEUE, 'schedule')).toEqual([later]);
      expect(await queues.browse(QUEUE, 'pending')).toEqual([]);
      expect(await queues.browse(QUEUE, 'active')).toEqual([]);
      expect((await queues.listJobs(QUEUE, 'dead'))[0]?.id).toBe(doom);
      expect((await queues.getJob(QUEUE, doom))?.state).toBe('dead');
      expect(await queues.metrics(QUEUE)).toMatchObject({ completed: 3, dead: 1 });
      expect(await queues.listQueues()).toContain(QUEUE);

      await queues.pause(QUEUE);
      expect(await queues.isPaused(QUEUE)).toBe(true);
      await queues.resume(QUEUE);
      expect(await queues.isPaused(QUEUE)).toBe(false);

      // A queue no loop here serves: only the reaper promotes its jobs as they fall due, one
      // per call (reaper.batch 1), so it finds its batch full and counts what is left.
      const unserved = uniqueQueue('acl-unserved');
      await queues.enqueue(unserved, 'a', { delayMs: 1 });
      await queues.enqueue(unserved, 'b', { delayMs: 1 });
      await waitUntil(async () => (await queues.counts(unserved)).pending === 2, 'the reaper promoting both');
      await queues.retry(QUEUE, doom);
      await expect(queues.waitFor(QUEUE, doom, 10_000)).resolves.toBe('retried');
      expect(await queues.remove(QUEUE, later)).toBe('schedule');
      const hold = await queues.enqueue(QUEUE, { kind: 'hold' });
      await waitUntil(
        async () => (await queues.getJob(QUEUE, hold))?.state === 'active',
        'the held job running',
      );
      expect(await queues.remove(QUEUE, hold)).toBe('active');
      await withTimeout(aborted.get(hold).promise, 10_000, 'the removed job aborted');

      // Flow control: the first use marks the queue (and counts its default lane), limits, lane
      // settings, a lane's pause, a priority, a throttle, and the reads across lanes.
      const urgent = await queues.enqueue(QUEUE, { kind: 'plain' }, { priority: 5, lane: 'tenant-a' });
      await expect(queues.waitFor(QUEUE, urgent, 10_000)).resolves.toBe('ok');
      await queues.setLimits(QUEUE, { laneConcurrency: 5, rateLimit: { max: 1_000, windowMs: 1_000 } });
      expect(await queues.getLimits(QUEUE)).toMatchObject({ laneConcurrency: 5 });
      await queues.setLane(QUEUE, 'tenant-a', { weight: 2 });
      await queues.pauseLane(QUEUE, 'tenant-b');
      const parked = await queues.enqueue(QUEUE, { kind: 'plain' }, { lane: 'tenant-b' });
      expect((await queues.lanes(QUEUE)).map((lane) => [lane.lane, lane.paused, lane.pending])).toEqual([
        ['tenant-a', false, 0],
        ['tenant-b', true, 1],
      ]);
      await queues.resumeLane(QUEUE, 'tenant-b');
      await expect(queues.waitFor(QUEUE, parked, 10_000)).resolves.toBe('ok');
      const limited = await queues.enqueue(QUEUE, { kind: 'limited' }, { lane: 'tenant-a' });
      await expect(queues.waitFor(QUEUE, limited, 10_000)).resolves.toBe('throttled');
      const held = await queues.enqueue(QUEUE, { kind: 'held' });
      // A hold of the queue wakes no idle worker (its loop would wait out IDLE_MAX_MS, 5 s):
      // an enqueue does, and its claim reads the hold and sleeps until it ends.
      await waitUntil(
        () => events.some((event) => event.type === 'throttled' && event.ids.includes(held)),
        'the queue held',
      );
      const after = await queues.enqueue(QUEUE, { kind: 'plain' });
      await expect(queues.waitFor(QUEUE, held, 10_000)).resolves.toBe('held');
      await expect(queues.waitFor(QUEUE, after, 10_000)).resolves.toBe('ok');
      expect(await queues.laneHolds(QUEUE)).toEqual({});
      expect(await queues.heldUntil(QUEUE)).toBeNull();

      // The registry's idleness check and removal: a queue registered but never used is dropped.
      const idle = uniqueQueue('acl-idle');
      await queues.register(idle);
      expect(await app.get(Reaper).prune()).toContain(idle);

      // The declared schedule ran twice: its occurrence was promoted, claimed, and advanced.
      await waitUntil(() => scheduledRuns.length >= 2, 'two runs of the declared schedule');
      expect((await queues.getSchedule(SCHEDULED, 'tick'))?.spec).toEqual({ everyMs: 100 });

      const types = new Set(events.map((event) => event.type));
      for (const type of [
        'enqueued',
        'claimed',
        'progress',
        'failed',
        'promoted',
        'dead',
        'throttled',
        'lane-paused',
        'lane-resumed',
      ]) {
        expect(types).toContain(type);
      }
    } finally {
      unsubscribe();
    }
    // Shutdown too: the node lease is given back and the connections quit under the same rights.
    await app.close();
    expect(await unexpectedRefusalsOf(admin, user)).toEqual([]);
  });

  it("cannot reach keys outside its prefix: the default prefix's registry, another prefix's queue", async () => {
    const direct = new Redis(urlAs(user, password));
    try {
      await expect(direct.smembers('emq:queues')).rejects.toThrow(/NOPERM/);
      await expect(direct.get(`other-${tag}:{${QUEUE}}:format`)).rejects.toThrow(/NOPERM/);
      await expect(direct.call('CONFIG', 'GET', 'maxmemory-policy')).rejects.toThrow(/NOPERM/);
      expect(await direct.get(`${PREFIX}:{${QUEUE}}:format`)).toBe('1');
    } finally {
      direct.disconnect();
    }
  });
});

describe('a worker under an ACL user refused INFO', () => {
  const user = `emq-noinfo-${tag}`;
  const password = randomBytes(12).toString('hex');
  const queue = uniqueQueue('acl-noinfo');

  @Processor(queue)
  class Echo {
    process(job: Job<string>) {
      return job.data;
    }
  }

  it('skips the version check and serves its queue', async () => {
    const admin = connect();
    await admin.call(
      'ACL',
      'SETUSER',
      ...aclArguments('emq-worker', user, password, PREFIX, { without: ['+info'] }),
    );
    try {
      // ioredis's own ready check needs INFO too: docs/upgrading.md says to turn it off here.
      const app = await bootApp([Echo], {
        connection: { url: urlAs(user, password), enableReadyCheck: false },
        keyPrefix: PREFIX,
        nodeId: 12,
      });
      try {
        const queues = app.get(QueueService);
        const id = await queues.enqueue(queue, 'still works');
        await expect(queues.waitFor(queue, id, 10_000)).resolves.toBe('still works');
      } finally {
        await app.close();
      }
      const refused = await unexpectedRefusalsOf(admin, user);
      expect(refused.map((entry) => entry.object)).toEqual(['info']);
    } finally {
      await admin.call('ACL', 'DELUSER', user);
      await admin.quit();
    }
  });
});
