import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import {
  Processor,
  QueueService,
  RateLimitedError,
  UnrecoverableError,
  type Job,
  type QueueEvent,
} from '@app/echomq';
import { Reaper } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { waitUntil } from '../worker/fixtures/support';
import { connect, redisUrl, uniqueQueue } from '../support/redis';

const tag = randomBytes(4).toString('hex');
const PREFIX = `acl-${tag}`;
const QUEUE = uniqueQueue('acl');

/** The ACL line of docs/upgrading.md, exactly as documented (user, password and prefix are its placeholders). */
function documentedAclLine(): string {
  const doc = readFileSync(join(__dirname, '../../docs/upgrading.md'), 'utf8');
  const line = doc.split('\n').find((text) => text.startsWith('ACL SETUSER '));
  if (!line) throw new Error('docs/upgrading.md documents no ACL SETUSER line');
  return line;
}

/** The documented rule for one user and prefix, as ACL SETUSER arguments. */
function aclArguments(user: string, password: string, prefix: string, without: string[] = []): string[] {
  const words = documentedAclLine().split(' ').slice(2);
  expect(words.slice(0, 5)).toEqual(['emq-app', 'on', '>change-me', 'resetkeys', '~emq:*']);
  return [user, 'on', `>${password}`, 'resetkeys', `~${prefix}:*`, ...words.slice(5)].filter(
    (word) => !without.includes(word),
  );
}

function urlAs(user: string, password: string): string {
  const url = new URL(redisUrl());
  url.username = user;
  url.password = password;
  return url.href;
}

/** Entries of ACL LOG (refused commands and keys) for one user; other suites' users are not ours to judge. */
async function refusalsOf(admin: Redis, user: string): Promise<Record<string, unknown>[]> {
  const log = (await admin.call('ACL', 'LOG', '128')) as unknown[][];
  return log
    .map((entry) => {
      const fields: Record<string, unknown> = {};
      for (let i = 0; i < entry.length; i += 2) fields[String(entry[i])] = entry[i + 1];
      return fields;
    })
    .filter((fields) => fields.username === user);
}

/** Jobs whose handler waits for something the test observes; resolved by the test. */
const gates = new Map<string, () => void>();
function gate(id: string): Promise<void> {
  return new Promise((resolve) => gates.set(id, resolve));
}

@Processor(QUEUE, { leaseMs: 3_000, backoff: { type: 'fixed', delayMs: 0 } })
class AclProcessor {
  async process(job: Job<{ kind: string }>) {
    switch (job.data.kind) {
      case 'flaky': // fail -> schedule -> promoted -> claimed again
        if (job.attempt === 1) throw new Error('first attempt fails');
        return 'recovered';
      case 'doom': // straight to dead; succeeds once retried
        if (job.attempt === 1) throw new UnrecoverableError('doomed');
        return 'retried';
      case 'limited': // a throttle of its lane, then it runs again
        if (job.attempt === 1) throw new RateLimitedError(50, { scope: 'lane' });
        return 'throttled';
      case 'slow': // holds its lease until a heartbeat extended it
        await job.progress({ step: 1 });
        await gate(job.id);
        return 'extended';
      default:
        return 'ok';
    }
  }
}

describe('a worker under an ACL user scoped to its key prefix', () => {
  const user = `emq-acl-${tag}`;
  const password = randomBytes(12).toString('hex');
  let admin: Redis;
  let app: INestApplication;
  let queues: QueueService;

  beforeAll(async () => {
    admin = connect();
    await admin.call('ACL', 'SETUSER', ...aclArguments(user, password, PREFIX));
    // No nodeId: the node number is leased under the prefix, with the user's rights.
    app = await bootApp([AclProcessor], { connection: { url: urlAs(user, password) }, keyPrefix: PREFIX });
    queues = app.get(QueueService);
  });

  afterAll(async () => {
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
      await queues.retry(QUEUE, doom);
      await expect(queues.waitFor(QUEUE, doom, 10_000)).resolves.toBe('retried');
      expect(await queues.remove(QUEUE, later)).toBe('schedule');

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
      expect(await queues.laneHolds(QUEUE)).toEqual({});
      expect(await queues.heldUntil(QUEUE)).toBeNull();

      // The registry's idleness check and removal: a queue registered but never used is dropped.
      const idle = uniqueQueue('acl-idle');
      await queues.register(idle);
      expect(await app.get(Reaper).prune()).toContain(idle);

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
    expect(await refusalsOf(admin, user)).toEqual([]);
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
    await admin.call('ACL', 'SETUSER', ...aclArguments(user, password, PREFIX, ['+info']));
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
      const refused = await refusalsOf(admin, user);
      expect(refused.map((entry) => entry.object)).toEqual(['info']);
    } finally {
      await admin.call('ACL', 'DELUSER', user);
      await admin.quit();
    }
  });
});
