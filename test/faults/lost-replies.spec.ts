import type { Redis } from 'ioredis';
import { claimJobs, failJob, JobExistsError, QueueService, queueKeys, type Job } from '@app/echomq/internal';
import type { FaultProxy } from '../support/fault-proxy';
import { connect, redisUrl, scriptContext, uniqueQueue } from '../support/redis';
import { deferred, DeferredMap, loopOf, processorClass, withTimeout } from '../worker/fixtures/support';
import {
  Apps,
  LOST_REPLY_FLAVOURS,
  eventsAbout,
  members,
  metricsOf,
  recordDrops,
  rowIds,
  runsScript,
  setsHolding,
  startProxy,
  stopWhenDrained,
} from './support/faults';

/**
 * Issue 8, item 2 (invariant 9): a write whose reply is lost after Redis ran it. The app
 * reaches Redis through a fault proxy that swallows exactly the reply to one transition
 * script, in two ways a real network does it:
 *
 * - deaf: the reply and every later one on that connection vanish, the socket stays open;
 *   only the command deadline (commandTimeoutMs, small here) notices;
 * - closed: the reply vanishes and the connection is closed right after, with the call
 *   outstanding (what used to make ioredis resend it on reconnect).
 *
 * Either way the call took effect on the server, and what the caller sees must be the first
 * call's outcome: the library repeats the call under the same request id and reads back the
 * recorded reply. Everything asserted about Redis is read on the real server directly.
 *
 * Why these tests fail on 7f436bd (before the hardening): there was no command deadline, so a
 * deaf connection held the call forever (the test's own withTimeout fails), and ioredis
 * resent the call after the close (autoResendUnfulfilledCommands), which ran the transition
 * a second time against the state the first one had left: the per-test comments say what
 * that second run answered.
 */
/** A hang detector for calls that must settle within a few deadlines (not a timing assertion). */
const SETTLES_MS = 10_000;
const LEASE_MS = 2_000;

const apps = new Apps();
let proxy: FaultProxy;
let direct: Redis;

beforeAll(() => {
  direct = connect();
});

afterAll(() => {
  direct.disconnect();
});

beforeEach(async () => {
  proxy = await startProxy();
});

afterEach(async () => {
  // Deaf sockets stay open until their client drops them: reset them first, so every app closes at once.
  await proxy.heal();
  proxy.closeAll();
  await apps.closeEvery();
  await stopWhenDrained(proxy);
});

describe.each(LOST_REPLY_FLAVOURS)('a lost reply (%s)', (_flavour, lose) => {
  describe('enqueue', () => {
    it('resolves with its id, and the job exists exactly once', async () => {
      // 7f436bd: deaf, the script call never settles (no deadline); closed, ioredis resends it and
      // the script finds the id it wrote the first time: the caller gets JobExistsError for a
      // job that exists.
      const queue = uniqueQueue('lost-enqueue');
      const producer = await apps.boot([], proxy.url);
      const queues = producer.get(QueueService);
      const dropped = recordDrops(proxy);
      lose(proxy, runsScript('emqEnqueue', queue));

      const outcome = await withTimeout(
        queues.enqueue(queue, { n: 1 }).catch((error: unknown) => error),
        SETTLES_MS,
        'the enqueue to settle',
      );

      expect(outcome).not.toBeInstanceOf(JobExistsError);
      expect(outcome).toEqual(expect.stringMatching(/^JOB/));
      const id = outcome as string;
      // The reply lost was this call's: its request (carrying the id) reached the server.
      expect(dropped.length).toBeGreaterThanOrEqual(1);
      expect(dropped[0]).toContain(id);
      expect(await members(direct, queue)).toEqual({ pending: [id], active: [], schedule: [], dead: [] });
      expect(await rowIds(direct, queue)).toEqual([id]);
      expect(await metricsOf(direct, queue)).toMatchObject({ enqueued: 1 });
      expect(await eventsAbout(direct, queue, 'enqueued', id)).toBe(1);
    });

    it('resolves every caller of a merged batch with its own id, each job created once', async () => {
      // 7f436bd: deaf, every caller merged into the call hangs; closed, the resent batch hits
      // its own ids and every merged caller gets JobExistsError.
      const queue = uniqueQueue('lost-batch');
      const producer = await apps.boot([], proxy.url);
      const queues = producer.get(QueueService);
      // Registered first, so the enqueues below reach the batcher in one tick and merge.
      await queues.register(queue);
      const dropped = recordDrops(proxy);
      lose(proxy, runsScript('emqEnqueue', queue));

      const callers = 5;
      const outcomes = await withTimeout(
        Promise.allSettled(Array.from({ length: callers }, (_, n) => queues.enqueue(queue, { n }))),
        SETTLES_MS,
        'the merged enqueues to settle',
      );

      const rejected = outcomes.filter((outcome) => outcome.status === 'rejected');
      expect(rejected).toEqual([]);
      const ids = outcomes.map((outcome) => (outcome as PromiseFulfilledResult<string>).value);
      expect(new Set(ids).size).toBe(callers);
      // One script call carried all of them, and it is the one whose reply was lost.
      for (const id of ids) expect(dropped[0]).toContain(id);
      const sorted = [...ids].sort();
      expect(await members(direct, queue)).toEqual({ pending: sorted, active: [], schedule: [], dead: [] });
      expect(await rowIds(direct, queue)).toEqual(sorted);
      expect(await metricsOf(direct, queue)).toMatchObject({ enqueued: callers });
    });
  });

  describe('admin calls', () => {
    it('remove resolves with the state it removed from, and the job is gone', async () => {
      // 7f436bd: deaf, remove hangs; closed, the resent remove finds no job: JobNotFoundError
      // (a 404 from the api) after a remove that succeeded.
      const queue = uniqueQueue('lost-remove');
      const producer = await apps.boot([], proxy.url);
      const queues = producer.get(QueueService);
      const id = await queues.enqueue(queue, {});
      lose(proxy, runsScript('emqRemove', queue));

      await expect(withTimeout(queues.remove(queue, id), SETTLES_MS, 'the remove to settle')).resolves.toBe(
        'pending',
      );

      expect(proxy.stats.repliesDropped).toBeGreaterThanOrEqual(1);
      expect(await setsHolding(direct, queue, id)).toEqual([]);
      expect(await rowIds(direct, queue)).toEqual([]);
      expect(await metricsOf(direct, queue)).toMatchObject({ removed: 1 });
    });

    it('retry resolves, and the dead job is pending with its attempts unchanged', async () => {
      // 7f436bd: deaf, retry hangs; closed, the resent retry finds the job in pending, not
      // dead: JobStateError (a 409) after a retry that succeeded.
      const queue = uniqueQueue('lost-retry');
      const producer = await apps.boot([], proxy.url);
      const queues = producer.get(QueueService);
      const id = await queues.enqueue(queue, {}, { maxAttempts: 1 });
      // Into dead by hand, on the real server: claim it and fail it as unrecoverable.
      const ctx = scriptContext(direct, queue);
      const [claimed] = (await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: `test-${queue}` }))
        .jobs;
      await failJob(ctx, claimed, { error: 'broken', backoffMs: 0, unrecoverable: true });
      expect(await setsHolding(direct, queue, id)).toEqual(['dead']);
      lose(proxy, runsScript('emqRetry', queue));

      await expect(
        withTimeout(queues.retry(queue, id), SETTLES_MS, 'the retry to settle'),
      ).resolves.toBeUndefined();

      expect(proxy.stats.repliesDropped).toBeGreaterThanOrEqual(1);
      expect(await setsHolding(direct, queue, id)).toEqual(['pending']);
      expect(await direct.hget(queueKeys(queue).job(id), 'a')).toBe('1');
      expect(await metricsOf(direct, queue)).toMatchObject({ retried: 1 });
    });
  });

  describe('a worker', () => {
    /** Boots a producer on the real server (no faults) and enqueues `count` jobs. */
    async function enqueueDirectly(queue: string, count: number, maxAttempts?: number): Promise<string[]> {
      const producer = await apps.boot([], redisUrl());
      return producer.get(QueueService).enqueueMany(
        queue,
        Array.from({ length: count }, (_, n) => ({ data: { n }, maxAttempts })),
      );
    }

    it.each([
      ['the default budget', undefined],
      ['maxAttempts: 1', 1],
    ])(
      'runs the jobs its lost claim took, on attempt 1 (%s), none left in active or dead',
      async (_budget, maxAttempts) => {
        // 7f436bd: deaf, the claim never settles and no handler runs; closed, ioredis resends the
        // claim, which finds pending empty (the first run took every job): the jobs sit in active,
        // held by nobody, until their lease ends; then the reaper gives them a second attempt
        // (attempt 2), or, with maxAttempts: 1, sends them to dead without a handler ever running.
        const queue = uniqueQueue('lost-claim');
        const total = 3;
        const ids = await enqueueDirectly(queue, total, maxAttempts);
        const runs = new Map<string, number[]>();
        const completed = new DeferredMap<void>();
        const Worker = processorClass(queue, { concurrency: total, leaseMs: LEASE_MS }, (job: Job) => {
          runs.set(job.id, [...(runs.get(job.id) ?? []), job.attempt]);
          return 'done';
        });
        const dropped = recordDrops(proxy);
        // Armed before the worker boots: its very first claim takes all three jobs.
        lose(proxy, runsScript('emqClaim', queue));
        const worker = await apps.boot([Worker], proxy.url);
        loopOf(worker, queue).events.on('completed', (id) => completed.get(id).resolve());

        await withTimeout(
          Promise.all(ids.map((id) => completed.get(id).promise)),
          SETTLES_MS,
          'every job the lost claim took to complete',
        );

        expect(dropped.length).toBeGreaterThanOrEqual(1);
        expect(['eval', 'evalsha']).toContain(dropped[0][0].toLowerCase());
        for (const id of ids) expect(runs.get(id)).toEqual([1]);
        // Each job was claimed once: the repeat read the first claim back instead of claiming again.
        expect(await metricsOf(direct, queue)).toMatchObject({ claimed: total, completed: total });
        expect(await members(direct, queue)).toEqual({ pending: [], active: [], schedule: [], dead: [] });
      },
    );

    it('completes a job once when the completion’s reply is lost: no stale, no second run', async () => {
      // 7f436bd: deaf, the completion never settles, and the heartbeat had already stopped for
      // the job; closed, the resent completion finds the job gone from active and reads STALE:
      // a 'stale' event and staleSettlements 1 instead of 'completed', for a job that completed.
      const queue = uniqueQueue('lost-complete');
      const [id] = await enqueueDirectly(queue, 1);
      let runs = 0;
      const Worker = processorClass(queue, { leaseMs: LEASE_MS, retainCompletedMs: 60_000 }, () => {
        runs += 1;
        return { ok: true };
      });
      lose(proxy, runsScript('emqComplete', queue));
      const worker = await apps.boot([Worker], proxy.url);
      const loop = loopOf(worker, queue);
      // The first outcome the worker reports for the job: what a caller of the worker learns.
      const outcome = deferred<{ event: string; result?: unknown }>();
      const stale: string[] = [];
      loop.events.on(
        'completed',
        (doneId, result) => doneId === id && outcome.resolve({ event: 'completed', result }),
      );
      loop.events.on('stale', (staleId) => {
        stale.push(staleId);
        outcome.resolve({ event: 'stale' });
      });

      await expect(
        withTimeout(outcome.promise, SETTLES_MS, 'the worker to report the job’s outcome'),
      ).resolves.toEqual({
        event: 'completed',
        result: { ok: true },
      });

      expect(proxy.stats.repliesDropped).toBeGreaterThanOrEqual(1);
      expect(stale).toEqual([]);
      expect(loop.runner.staleSettlements).toBe(0);
      expect(runs).toBe(1);
      // Completed for good: in no set, so no reap can hand it to a handler again.
      expect(await setsHolding(direct, queue, id)).toEqual([]);
      const row = await direct.hgetall(queueKeys(queue).job(id));
      expect(row).toMatchObject({ a: '1', r: JSON.stringify({ ok: true }) });
      expect(row.f).toBeDefined();
      const metrics = await metricsOf(direct, queue);
      expect(metrics).toMatchObject({ claimed: 1, completed: 1 });
      expect(metrics.stale ?? 0).toBe(0);
      expect(await eventsAbout(direct, queue, 'completed', id)).toBe(1);
    });

    it.each([
      ['schedule', 3],
      ['dead', 1],
    ])(
      'puts a failed job in %s exactly as one failure would when the fail reply is lost',
      async (state, maxAttempts) => {
        // 7f436bd: deaf, the failure never settles; closed, the resent fail finds the job out of
        // active and reads STALE: the worker reports 'stale' (no 'failed', staleSettlements 1) for
        // a failure Redis recorded.
        const queue = uniqueQueue('lost-fail');
        const [id] = await enqueueDirectly(queue, 1, maxAttempts);
        let runs = 0;
        const Worker = processorClass(
          queue,
          // A long backoff: the retry stays in schedule, where the test looks at it.
          { leaseMs: LEASE_MS, backoff: { type: 'fixed', delayMs: 60_000 } },
          () => {
            runs += 1;
            throw new Error('boom');
          },
        );
        lose(proxy, runsScript('emqFail', queue));
        const worker = await apps.boot([Worker], proxy.url);
        const loop = loopOf(worker, queue);
        const outcome = deferred<string>();
        const stale: string[] = [];
        loop.events.on(
          'failed',
          (failedId, _error, where) => failedId === id && outcome.resolve(`failed into ${where}`),
        );
        loop.events.on('stale', (staleId) => {
          stale.push(staleId);
          outcome.resolve('stale');
        });

        await expect(
          withTimeout(outcome.promise, SETTLES_MS, 'the worker to report the failure'),
        ).resolves.toBe(`failed into ${state}`);

        expect(proxy.stats.repliesDropped).toBeGreaterThanOrEqual(1);
        expect(stale).toEqual([]);
        expect(loop.runner.staleSettlements).toBe(0);
        expect(runs).toBe(1);
        expect(await setsHolding(direct, queue, id)).toEqual([state]);
        const row = await direct.hgetall(queueKeys(queue).job(id));
        expect(row).toMatchObject({ a: '1', e: 'Error: boom' });
        expect(row.c).toBeUndefined();
        const metrics = await metricsOf(direct, queue);
        // One failure, counted once: 'failed' for a retry to come, 'dead' when the budget is spent.
        const counter = state === 'dead' ? 'dead' : 'failed';
        expect(metrics[counter]).toBe(1);
        expect(metrics[counter === 'dead' ? 'failed' : 'dead'] ?? 0).toBe(0);
        expect(metrics.stale ?? 0).toBe(0);
        expect(await eventsAbout(direct, queue, state === 'dead' ? 'dead' : 'failed', id)).toBe(1);
      },
    );
  });
});
