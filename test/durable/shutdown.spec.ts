import { NotReplicatedError, QueueService, type Job } from '@app/echomq';
import { queueKeys } from '@app/echomq/internal';
import { UnconfirmedWriteError } from '@app/echomq/durability/durable-errors';
import { FaultProxy } from '../support/fault-proxy';
import { uniqueQueue } from '../support/redis';
import { processorClass, waitUntil } from '../worker/fixtures/support';
import { ReplicatedPair } from './support/replicated-pair';

/**
 * Shutdown with durable writes, the replica stopped (SIGSTOP) until after the close: each WAIT
 * here may last 60 s (the longest durable.timeoutMs), twice this suite's test timeout, so a
 * close that waited one out would fail its test. A claim being confirmed is given back at
 * once, and an enqueue being confirmed rejects at once, saying why.
 */
const SLOW_WAIT = { replicas: 1, timeoutMs: 60_000 };
/** A worker's shutdown: a short grace, short command deadlines. */
const QUICK_SHUTDOWN = { shutdownGraceMs: 300, commandTimeoutMs: 1_000 };

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

/** Enqueues one job from a producer whose writes are not durable, so it can while the replica is stopped. */
async function enqueueWithoutWaiting(queue: string): Promise<string> {
  const producer = await pair.boot([], undefined, { nodeId: 8 });
  return producer.get(QueueService).enqueue(queue, { n: 1 });
}

/** A durable worker on `queue` whose claim of one job now waits for the stopped replica. */
async function workerWaitingForItsClaim(
  queue: string,
  runs: string[],
  options: Partial<Parameters<ReplicatedPair['boot']>[2]> = {},
): Promise<{ worker: Awaited<ReturnType<ReplicatedPair['boot']>>; id: string }> {
  const Proc = processorClass(queue, { leaseMs: 60_000 }, (job: Job) => void runs.push(job.id));
  const worker = await pair.boot([Proc], SLOW_WAIT, { ...QUICK_SHUTDOWN, ...options });
  await pair.pause();
  const id = await enqueueWithoutWaiting(queue);
  await waitUntil(
    async () => (await pair.onMaster.zscore(queueKeys(queue).active, id)) !== null,
    'the claim',
  );
  await pair.untilSomeoneWaits('the claim to wait for its replica');
  return { worker, id };
}

describe('shutdown with durable writes and a stopped replica', () => {
  it('a worker stops waiting for its claim to be confirmed and gives the job back unstarted', async () => {
    const queue = uniqueQueue('durable-close');
    const runs: string[] = [];
    const { worker, id } = await workerWaitingForItsClaim(queue, runs);

    await pair.close(worker);

    expect(runs).toEqual([]);
    expect(await pair.onMaster.zscore(queueKeys(queue).pending, id)).not.toBeNull();
    expect(await pair.onMaster.hget(queueKeys(queue).metrics, 'released')).toBe('1');
  });

  it('a worker whose Redis goes silent at the close repeats that release no longer than the shutdown allows', async () => {
    // The jobs' lease is 60 s: a release repeated until the lease's end would hold the close past the test's timeout.
    const proxy = await FaultProxy.start({ target: { host: '127.0.0.1', port: pair.master.port } });
    try {
      const queue = uniqueQueue('durable-close-silent');
      const runs: string[] = [];
      const { worker, id } = await workerWaitingForItsClaim(queue, runs, { connection: { url: proxy.url } });
      proxy.silence();

      await pair.close(worker);

      // The release never got through: the job waits out its lease in active, never started.
      expect(runs).toEqual([]);
      expect(await pair.onMaster.zscore(queueKeys(queue).active, id)).not.toBeNull();
    } finally {
      await proxy.stop();
    }
  });

  it('an enqueue being confirmed rejects at once with the jobs written, blaming the shutdown, not the replicas', async () => {
    const queue = uniqueQueue('durable-enqueue-close');
    // A repeat window of 10 s: a confirmation still retried after the close would end in 5 s, as the wrong error.
    const app = await pair.boot([], SLOW_WAIT, { replayWindowMs: 10_000 });
    const queues = app.get(QueueService);
    await queues.register(queue);
    await pair.pause();
    const call = queues.enqueue(queue, { n: 1 }).catch((reason: unknown) => reason);
    await pair.untilSomeoneWaits('the enqueue to wait for its replica');

    await pair.close(app);
    const error = await call;

    expect(error).toBeInstanceOf(NotReplicatedError);
    expect(error).toBeInstanceOf(UnconfirmedWriteError);
    expect(error).toMatchObject({ code: 'NOT_REPLICATED', reason: 'the application is shutting down' });
    expect((error as Error).message).not.toMatch(/acknowledged the write within/);
    const { ids } = error as NotReplicatedError;
    expect(ids).toHaveLength(1);
    expect(await pair.onMaster.zscore(queueKeys(queue).pending, ids[0])).not.toBeNull();
  });
});
