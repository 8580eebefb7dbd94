import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { QueueService, type Job } from '@app/echomq';
import { queueKeys, RedisConnections } from '@app/echomq/internal';
import { claimJobs, enqueueJobs } from '@app/echomq/scripts';
import { replicatedClaim } from '@app/echomq/durability/durable-claim';
import { replicaWaitFor } from '@app/echomq/durability/durable-context';
import { monotonicMs } from '@app/echomq/monotonic';
import { jobRecord } from '../support/assertions';
import { idMinter, scriptContext, uniqueQueue } from '../support/redis';
import { RedisServer } from '../support/redis-server';
import { deferred, processorClass, serverNow, waitUntil } from '../worker/fixtures/support';
import { ReplicatedPair } from './support/replicated-pair';

/**
 * Durable claims: a claimed job's handler starts only once the claim (the attempts increment,
 * the job's fencing token) is on the replica, read there from inside the handler. A claim the
 * replica does not confirm in time is given back unstarted, its retry budget intact.
 */
let pair: ReplicatedPair;

beforeAll(async () => {
  pair = await ReplicatedPair.start();
});

afterEach(async () => {
  await pair.closeApps();
});

afterAll(async () => {
  await pair.destroy();
});

/** A producer whose writes are not durable, so jobs can be enqueued while the replica is stopped. */
async function enqueueWithoutWaiting(queue: string, data: unknown): Promise<string> {
  const producer = await pair.boot([], undefined, { nodeId: 8 });
  return producer.get(QueueService).enqueue(queue, data);
}

describe('a durable claim', () => {
  it('starts its handler only once the replica has the claim', async () => {
    const queue = uniqueQueue('durable-claim');
    const started = deferred<{ attempt: number; onReplica: string | null }>();
    const Proc = processorClass(queue, { leaseMs: 60_000 }, async (job: Job) => {
      const onReplica = await pair.onReplica.hget(`${queueKeys(queue).jobPrefix}${job.id}`, 'a');
      started.resolve({ attempt: job.attempt, onReplica });
    });
    await pair.boot([Proc], { replicas: 1, timeoutMs: 30_000 });
    await pair.pause();

    const id = await enqueueWithoutWaiting(queue, { n: 1 });
    // Claimed on the master, and the worker waits for the replica before starting it.
    await waitUntil(
      async () => (await pair.onMaster.zscore(queueKeys(queue).active, id)) !== null,
      'the claim',
    );
    await pair.untilSomeoneWaits('the worker to wait for its replica');
    expect(started.settled).toBe(false);

    pair.resume();
    const run = await started.promise;
    expect(run.attempt).toBe(1);
    // The token the handler holds was on the replica before the handler ran.
    expect(run.onReplica).toBe('1');
  });

  it('gives the jobs back unstarted, budget intact, when the replica does not confirm within half the lease', async () => {
    const queue = uniqueQueue('durable-release');
    const runs: number[] = [];
    const done = deferred<void>();
    const Proc = processorClass(queue, { leaseMs: 1_000, maxAttempts: 1 }, (job: Job) => {
      runs.push(job.attempt);
      done.resolve();
    });
    await pair.boot([Proc], { replicas: 1, timeoutMs: 100 });
    await pair.pause();

    await enqueueWithoutWaiting(queue, { n: 1 });
    const metrics = queueKeys(queue).metrics;
    await waitUntil(async () => Number(await pair.onMaster.hget(metrics, 'released')) >= 1, 'a release');
    expect(runs).toEqual([]);

    pair.resume();
    await done.promise;
    // Claimed again after its release (attempts only grow), and run once: maxAttempts 1 was not spent.
    expect(runs).toHaveLength(1);
    expect(runs[0]).toBeGreaterThan(1);
    expect(await pair.onMaster.zcard(queueKeys(queue).dead)).toBe(0);
  });

  it('never starts a handler on a claim confirmed past half its lease, even by a WAIT longer than the lease', async () => {
    const queue = uniqueQueue('durable-late');
    const keys = queueKeys(queue);
    const started = deferred<{ attempt: number; aborted: boolean; leaseLeftMs: number }>();
    const Proc = processorClass(queue, { leaseMs: 1_000 }, async (job: Job) => {
      const deadline = Number(await pair.onMaster.zscore(keys.active, job.id));
      started.resolve({
        attempt: job.attempt,
        aborted: job.signal.aborted,
        leaseLeftMs: deadline - (await serverNow(pair.onMaster)),
      });
    });
    // A WAIT of up to 3 s, three times the lease: only the claim's cut-off keeps a late answer out.
    await pair.boot([Proc], { replicas: 1, timeoutMs: 3_000 });
    await pair.pause();

    const id = await enqueueWithoutWaiting(queue, { n: 1 });
    await waitUntil(async () => (await pair.onMaster.zscore(keys.active, id)) !== null, 'the claim');
    const firstLeaseEnd = Number(await pair.onMaster.zscore(keys.active, id));
    // Redis's own clock passes the first claim's lease end while the replica is still silent.
    await waitUntil(async () => (await serverNow(pair.onMaster)) > firstLeaseEnd, 'the first lease to end');
    expect(started.settled).toBe(false);

    pair.resume();
    const run = await started.promise;
    // Not the first claim, whose lease ran out unconfirmed: a later one, with its lease live.
    expect(run.attempt).toBeGreaterThan(1);
    expect(run.aborted).toBe(false);
    expect(run.leaseLeftMs).toBeGreaterThan(0);
  });

  it('releases a claim its confirmation did not find on the master, instead of leaving it in active', async () => {
    // The confirmation reaches another server than the claim did (two masters while the
    // sentinels switch): it finds no record of the claim. Its jobs go back, budget intact.
    const elsewhere = await RedisServer.start({ args: [] });
    const connections = new RedisConnections({ connection: { url: elsewhere.url } });
    const redis = new Redis(pair.master.url);
    try {
      const queue = uniqueQueue('durable-absent');
      const ctx = {
        ...scriptContext(redis, queue),
        durability: replicaWaitFor(connections, { replicas: 1, timeoutMs: 50 })!,
      };
      const id = idMinter(3)();
      await enqueueJobs(ctx, [jobRecord(id, { maxAttempts: 1 })], 60_000);
      const batch = await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: 'absent-claim' });
      expect(batch.jobs).toHaveLength(1);
      const now = monotonicMs();

      const confirmed = await replicatedClaim(ctx, ctx.durability, batch, {
        queue,
        claimantPrefix: 'absent-claim',
        giveUpAt: now + 30_000,
        leaseEnd: now + 60_000,
        stopped: new AbortController().signal,
        logger: new Logger('durable-absent'),
      });

      expect(confirmed.jobs).toEqual([]);
      expect(await redis.zscore(ctx.keys.active, id)).toBeNull();
      expect(await redis.zscore(ctx.keys.pending, id)).not.toBeNull();
      // Released, not reaped: maxAttempts 1 is still there to spend.
      const again = await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: 'absent-again' });
      expect(again.jobs.map((job) => job.id)).toEqual([id]);
    } finally {
      redis.disconnect();
      await connections.onApplicationShutdown();
      await elsewhere.destroy();
    }
  });
});
