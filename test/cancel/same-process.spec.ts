import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { JobAbortedError, QueueService, queueKeys, type Job } from '@app/echomq/internal';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import {
  closeAll,
  DeferredMap,
  loopOf,
  processorClass,
  waitUntil,
  withTimeout,
  type Deferred,
} from '../worker/fixtures/support';
import { blockedReaders, killReaders, removedAt, stampServerTime } from './support/cancels';

/** A minute: the heartbeat (every lease/3) cannot be what aborts a handler within a test. */
const LEASE_MS = 60_000;
const PROMPT_MS = 2_000;
/** How long a test waits for an abort before it fails (instead of hanging to the suite's timeout). */
const ABORT_WAIT_MS = 10_000;

function abortOf<T>(promise: Promise<T>): Promise<T> {
  return withTimeout(promise, ABORT_WAIT_MS, 'the removed job’s handler to be aborted');
}

const apps: INestApplication[] = [];
const gates: Deferred<void>[] = [];
const stampKeys: string[] = [];
let redis: Redis;

beforeAll(() => {
  redis = connect();
});

afterAll(() => {
  redis.disconnect();
});

afterEach(async () => {
  for (const gate of gates.splice(0)) gate.resolve();
  await closeAll(apps.splice(0));
  if (stampKeys.length > 0) await redis.del(...stampKeys.splice(0));
});

interface Seen {
  readonly reason: unknown;
  /** The Redis server's time in the abort listener. */
  readonly at: number;
}

/**
 * A worker app for `queue` whose handler reports its start and its abort; 'obey' returns when
 * aborted, 'ignore' returns only when the test opens the job's gate. Its connections carry a
 * name of their own, so the test can find (and kill) its cancel reader.
 */
async function worker(queue: string, mode: 'obey' | 'ignore', connectionName = uniqueQueue('conn')) {
  const started = new DeferredMap<Job>();
  const aborted = new DeferredMap<Seen>();
  const gatesById = new DeferredMap<void>();
  const stamps = `cancel-test:${queue}:stamps`;
  stampKeys.push(stamps);
  const Worker = processorClass(queue, { leaseMs: LEASE_MS, concurrency: 4 }, async (job) => {
    const abort = new Promise<void>((resolve) =>
      job.signal.addEventListener(
        'abort',
        () => {
          void stampServerTime(redis, stamps).then((at) => {
            aborted.get(job.id).resolve({ reason: job.signal.reason, at });
            resolve();
          });
        },
        { once: true },
      ),
    );
    started.get(job.id).resolve(job);
    if (mode === 'obey') await abort;
    else {
      const gate = gatesById.get(job.id);
      gates.push(gate); // opened in cleanup too, whatever the test did
      await gate.promise;
    }
    return 'a late result';
  });
  const app = await bootApp([Worker], {
    connection: { url: redisUrl(), connectionName },
    shutdownGraceMs: 300,
  });
  apps.push(app);
  const loop = loopOf(app, queue);
  const outcomes = new DeferredMap<string>();
  loop.events.on('completed', (id) => outcomes.get(id).resolve('completed'));
  loop.events.on('stale', (id) => outcomes.get(id).resolve('stale'));
  const open = (id: string): void => gatesById.get(id).resolve();
  return { queues: app.get(QueueService), loop, started, aborted, outcomes, open, connectionName };
}

describe('cancellation in the same process', () => {
  it('aborts the handler at once with a reason that says it was removed; its late complete is STALE', async () => {
    const queue = uniqueQueue('cancel');
    const { queues, started, aborted, outcomes, loop } = await worker(queue, 'obey');
    const id = await queues.enqueue(queue, {});
    await started.get(id).promise;

    await expect(queues.remove(queue, id)).resolves.toBe('active');
    const seen = await abortOf(aborted.get(id).promise);
    const delay = seen.at - (await removedAt(redis, queueKeys(queue).events, id));
    console.log(`same-process cancel: handler aborted ${delay} ms after the remove ran (Redis clock)`);
    expect(delay).toBeLessThan(PROMPT_MS);
    expect(seen.reason).toBeInstanceOf(JobAbortedError);
    expect((seen.reason as JobAbortedError).message).toMatch(/removed/);
    expect(seen.reason).toMatchObject({ reason: 'removed', code: 'JOB_ABORTED' });

    await expect(outcomes.get(id).promise).resolves.toBe('stale');
    expect(loop.runner.staleSettlements).toBe(1);
    expect(await queues.getJob(queue, id)).toBeUndefined();
    expect((await queues.metrics(queue)).completed ?? 0).toBe(0);
  });

  it('aborts only the removed job: the others of the same claim run on and complete', async () => {
    const queue = uniqueQueue('cancelone');
    const { queues, started, aborted, outcomes, open } = await worker(queue, 'ignore');
    const [kept, removed] = await queues.enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
    await Promise.all([started.get(kept).promise, started.get(removed).promise]);

    await queues.remove(queue, removed);
    await abortOf(aborted.get(removed).promise);
    open(kept);
    open(removed);
    await expect(outcomes.get(kept).promise).resolves.toBe('completed');
    await expect(outcomes.get(removed).promise).resolves.toBe('stale');
    expect(aborted.get(kept).settled).toBe(false);
  });

  it('still cannot complete a job whose handler ignores its signal', async () => {
    const queue = uniqueQueue('cancelignore');
    const { queues, started, aborted, outcomes, open } = await worker(queue, 'ignore');
    const id = await queues.enqueue(queue, {});
    await started.get(id).promise;
    await queues.remove(queue, id);
    await abortOf(aborted.get(id).promise);

    open(id);
    await expect(outcomes.get(id).promise).resolves.toBe('stale');
    expect(await queues.getJob(queue, id)).toBeUndefined();
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
  });

  it('keeps cancelling after its reader’s connection is killed (it reconnects and reads on from where it was)', async () => {
    const queue = uniqueQueue('cancelkill');
    const { queues, started, aborted, outcomes, connectionName } = await worker(queue, 'obey');
    await waitUntil(
      async () => (await blockedReaders(redis, connectionName)).length === 1,
      "the worker's cancel reader to block",
    );
    const id = await queues.enqueue(queue, {});
    await started.get(id).promise;

    expect(await killReaders(redis, connectionName)).toBe(1);
    await queues.remove(queue, id);
    await abortOf(aborted.get(id).promise);
    await expect(outcomes.get(id).promise).resolves.toBe('stale');
  });

  it('stops following the cancels stream when the application closes', async () => {
    const queue = uniqueQueue('cancelclose');
    const { connectionName } = await worker(queue, 'obey');
    await waitUntil(async () => (await blockedReaders(redis, connectionName)).length === 1, 'the reader');
    await closeAll(apps.splice(0));
    expect(await blockedReaders(redis, connectionName)).toEqual([]);
  });
});

describe('cancellation is the removal of an active job only', () => {
  it('writes no cancel for a job removed from pending', async () => {
    const queue = uniqueQueue('cancelpending');
    const { queues } = await worker(uniqueQueue('other'), 'obey');
    const id = await queues.enqueue(queue, {});
    await queues.remove(queue, id);
    expect(await redis.exists(queueKeys(queue).cancels)).toBe(0);
  });
});
