import { QueueService, type Job } from '@app/echomq';
import { queueKeys } from '@app/echomq/internal';
import { uniqueQueue } from '../support/redis';
import { deferred, processorClass, waitUntil } from '../worker/fixtures/support';
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
});
