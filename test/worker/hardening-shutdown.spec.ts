import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { QueueService, type Job } from '@app/echomq';
import { FaultProxy } from '../support/fault-proxy';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, deferred, processorClass, withTimeout, type Deferred } from './fixtures/support';

/**
 * Issue 8, items 7 and 4: a shutdown whose release does not go as planned. Only a release
 * that Redis recorded lets a job skip its settlement, and a shutdown ends in bounded time
 * even when no Redis call returns.
 */
const apps: INestApplication[] = [];
const gates: Deferred<void>[] = [];
const cleanups: (() => Promise<void>)[] = [];
let redis: Redis;

function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    else signal.addEventListener('abort', () => resolve(signal.reason), { once: true });
  });
}

async function boot(providers: Parameters<typeof bootApp>[0], options: Parameters<typeof bootApp>[1]) {
  const app = await bootApp(providers, { shutdownGraceMs: 300, ...options });
  apps.push(app);
  return app;
}

/** Closes an app the test closes itself; it is no longer cleaned up afterwards. */
async function close(app: INestApplication, what: string): Promise<void> {
  await withTimeout(app.close(), 20_000, what);
  apps.splice(apps.indexOf(app), 1);
}

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

afterEach(async () => {
  for (const entry of gates.splice(0)) entry.resolve();
  await closeAll(apps.splice(0));
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('shutdown when the network or Redis does not cooperate', () => {
  it('still completes a job whose release at shutdown failed, when its handler then succeeds', async () => {
    const queue = uniqueQueue('release-refused');
    // The worker connects as its own ACL user; at shutdown that user loses access to the
    // queue's pending set, which release declares and complete does not: a
    // release refused by Redis itself, with every other call of the worker still working.
    const user = `emq-${randomBytes(6).toString('hex')}`;
    const password = randomBytes(12).toString('hex');
    await redis.call('ACL', 'SETUSER', user, 'on', `>${password}`, '~*', '&*', '+@all');
    cleanups.push(async () => void (await redis.call('ACL', 'DELUSER', user)));
    const url = new URL(redisUrl());
    url.username = user;
    url.password = password;

    const started = deferred<Job>();
    // A handler that, told to stop, saves its work and returns a value: a success.
    const Worker = processorClass(queue, { concurrency: 1, retainCompletedMs: 60_000 }, async (job) => {
      started.resolve(job);
      const reason = await aborted(job.signal);
      return { stoppedBy: (reason as { reason?: string }).reason };
    });
    const app = await boot([Worker], {
      connection: { url: url.toString() },
      queues: { [queue]: { maxAttempts: 1 } },
    });
    const id = await app.get(QueueService).enqueue(queue, {});
    await started.promise;

    await redis.call(
      'ACL',
      'SETUSER',
      user,
      'resetkeys',
      '~emq:[^{]*', // the registry and node leases
      `~emq:{${queue}}:[^p]*`, // the queue's keys but pending (which release writes and complete does not)...
      `~emq:{${queue}}:pa*`, // ...and its pause flag
    );
    await close(app, 'app.close() with a release Redis refuses');

    const reader = await boot([], {});
    const queues = reader.get(QueueService);
    expect(await queues.getJob(queue, id)).toMatchObject({
      state: 'completed',
      attempts: 1,
      result: { stoppedBy: 'shutdown' },
    });
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await queues.metrics(queue)).toMatchObject({ completed: 1 });
  });

  it('ends within its grace period plus a bounded margin while every Redis call hangs', async () => {
    const queue = uniqueQueue('silent-shutdown');
    const target = new URL(redisUrl());
    const proxy = await FaultProxy.start({ target: { host: target.hostname, port: Number(target.port) } });
    cleanups.push(() => proxy.stop());
    const started = deferred<Job>();
    const never = deferred<void>();
    gates.push(never);
    // Handlers that ignore their signal: the worst case for a shutdown.
    const Worker = processorClass(queue, { concurrency: 3, leaseMs: 5_000 }, async (job) => {
      started.resolve(job);
      await never.promise;
    });
    const app = await boot([Worker], {
      connection: { url: proxy.url },
      commandTimeoutMs: 500,
      replayWindowMs: 5_000,
    });
    await app.get(QueueService).enqueueMany(queue, [{ data: 1 }, { data: 2 }, { data: 3 }]);
    await started.promise;

    proxy.silence(); // nothing the worker sends from now on is ever answered

    // A hang detector, not a timing assertion: the bound is grace + a few command deadlines.
    await close(app, 'app.close() while Redis is silent');
  });
});
