import { NotReplicatedError, OutcomeUnknownError, QueueService } from '@app/echomq';
import { queueKeys, RedisConnections } from '@app/echomq/internal';
import { replicaWaitFor } from '@app/echomq/durability/durable-context';
import { replicatedWrite } from '@app/echomq/durability/durable-write';
import { monotonicMs } from '@app/echomq/monotonic';
import { FaultProxy } from '../support/fault-proxy';
import { freePort } from '../support/redis-server';
import { uniqueQueue } from '../support/redis';
import { runsScript } from '../faults/support/faults';
import { ReplicatedPair } from './support/replicated-pair';

/**
 * Durable enqueue (module option `durable`): an enqueue resolves only once a replica has its
 * job, read on the replica itself; with the replica silent (SIGSTOP) it rejects with
 * NotReplicatedError naming the jobs, which are on the master. A confirmation that WAITs on a
 * connection that wrote nothing would return at once and prove nothing: these tests fail then.
 */
const LONG_WAIT = { replicas: 1, timeoutMs: 30_000 };
const SHORT_WAIT = { replicas: 1, timeoutMs: 200 };

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

async function rowOn(redis: ReplicatedPair['onMaster'], queue: string, id: string): Promise<boolean> {
  return (await redis.exists(`${queueKeys(queue).jobPrefix}${id}`)) === 1;
}

/** Tracks whether a promise has settled, without awaiting it. */
function tracked<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  watched.catch(() => undefined);
  return { promise: watched, settled: () => settled };
}

describe.each([
  ['enqueue', (queues: QueueService, queue: string) => queues.enqueue(queue, { n: 1 })],
  [
    'enqueueMany',
    async (queues: QueueService, queue: string) => (await queues.enqueueMany(queue, [{ data: 1 }]))[0],
  ],
  [
    'submit (throttle)',
    async (queues: QueueService, queue: string) =>
      (await queues.submit(queue, { n: 1 }, { throttle: { key: 'k', windowMs: 60_000 } })).id,
  ],
])('durable %s', (_name, enqueue) => {
  it('resolves only once the replica has the job', async () => {
    const queue = uniqueQueue('durable');
    const queues = (await pair.boot([], LONG_WAIT)).get(QueueService);
    await queues.register(queue);
    await pair.pause();

    const call = tracked(enqueue(queues, queue));
    // The job is written on the master, and the confirmation waits for the silent replica.
    await pair.untilSomeoneWaits('the enqueue to wait for its replica');
    const onMaster = await pair.onMaster.zcard(queueKeys(queue).pending);
    expect(onMaster).toBe(1);
    expect(call.settled()).toBe(false);

    pair.resume();
    const id = await call.promise;
    expect(await rowOn(pair.onReplica, queue, id)).toBe(true);
  });

  it('rejects with NotReplicatedError naming the job, which is on the master, when the replica is silent', async () => {
    const queue = uniqueQueue('durable-silent');
    const queues = (await pair.boot([], SHORT_WAIT)).get(QueueService);
    await queues.register(queue);
    await pair.pause();

    const error = (await enqueue(queues, queue).catch((reason: unknown) => reason)) as NotReplicatedError;

    expect(error).toBeInstanceOf(NotReplicatedError);
    expect(error).toMatchObject({ code: 'NOT_REPLICATED', acknowledged: 0, required: 1, timeoutMs: 200 });
    expect(error.ids).toHaveLength(1);
    expect(await rowOn(pair.onMaster, queue, error.ids[0])).toBe(true);
    pair.resume();
  });
});

describe('durable enqueue, merged and repeated', () => {
  it('rejects each merged caller with its own jobs', async () => {
    const queue = uniqueQueue('durable-merged');
    const queues = (await pair.boot([], SHORT_WAIT)).get(QueueService);
    await queues.register(queue);
    await pair.pause();

    const callers = [1, 2, 3];
    const outcomes = await Promise.allSettled(
      callers.map((n) => queues.enqueueMany(queue, [{ data: n }, { data: -n }])),
    );

    const errors = outcomes.map((outcome) => (outcome as PromiseRejectedResult).reason as NotReplicatedError);
    for (const [at, error] of errors.entries()) {
      expect(error).toBeInstanceOf(NotReplicatedError);
      // Its own two jobs, read back from the master: no other caller's, none missing.
      const data = await Promise.all(error.ids.map(async (id) => (await queues.getJob(queue, id))?.data));
      expect(data).toEqual([callers[at], -callers[at]]);
    }
    expect(new Set(errors.flatMap((error) => error.ids)).size).toBe(6);
    expect(await pair.onMaster.zcard(queueKeys(queue).pending)).toBe(6);
    pair.resume();
  });

  it('confirms a call repeated after its reply was lost (the replay writes nothing) against the replica', async () => {
    // The repeat runs on a fresh socket and its replay writes nothing: a WAIT on that socket
    // would count the silent replica at once. The enqueue must still wait for it.
    const proxy = await FaultProxy.start({ target: { host: '127.0.0.1', port: pair.master.port } });
    try {
      const queue = uniqueQueue('durable-replay');
      const app = await pair.boot([], SHORT_WAIT, {
        connection: { url: proxy.url },
        commandTimeoutMs: 300,
        replayWindowMs: 5_000,
      });
      const queues = app.get(QueueService);
      await queues.register(queue);
      const dropped: string[][] = [];
      proxy.on('replyDropped', (command) => dropped.push([...command]));
      proxy.loseRepliesWhile(runsScript('emqEnqueue', queue), { count: 1 });
      await pair.pause();

      const error = await queues.enqueue(queue, { n: 1 }).catch((reason: unknown) => reason);

      expect(dropped.length).toBeGreaterThanOrEqual(1);
      expect(error).toBeInstanceOf(NotReplicatedError);
      expect(await pair.onMaster.zcard(queueKeys(queue).pending)).toBe(1);
      pair.resume();
      // With the replica back, the same kind of call resolves and the replica has its job.
      proxy.loseRepliesWhile(runsScript('emqEnqueue', queue), { count: 1 });
      const id = await queues.enqueue(queue, { n: 2 });
      expect(await rowOn(pair.onReplica, queue, id)).toBe(true);
      await pair.closeApps();
    } finally {
      await proxy.stop();
    }
  });

  it('runs a write again under its request id when its record is gone from the master (lost in a failover)', async () => {
    // What a failover after the reply looks like from the new master: the call's record and its
    // writes are not there. Simulated by deleting them after the first run.
    const connections = new RedisConnections({ connection: { url: pair.master.url } });
    try {
      const wait = replicaWaitFor(connections, LONG_WAIT)!;
      const key = `emq:{${uniqueQueue('durable-rerun')}}:reply:abc`;
      let runs = 0;
      const write = async (): Promise<number> => {
        runs += 1;
        // the write a script makes, with its record
        await pair.onMaster.set(key, String(runs), 'PX', 60_000);
        if (runs === 1) await pair.onMaster.del(key);
        return runs;
      };

      const outcome = await replicatedWrite(wait, key, 60_000, write, monotonicMs() + 10_000);

      expect(outcome).toEqual({ result: 2, state: 'confirmed', acknowledged: 1 });
      expect(await pair.onReplica.get(key)).toBe('2');
    } finally {
      await connections.onApplicationShutdown();
    }
  });

  it('gives up with OutcomeUnknownError when the record never shows on the master, without calling a repeat safe', async () => {
    const connections = new RedisConnections({ connection: { url: pair.master.url } });
    try {
      const wait = replicaWaitFor(connections, LONG_WAIT)!;
      let runs = 0;
      const write = async (): Promise<number> => ++runs;

      const error = await replicatedWrite(
        wait,
        'emq:{nowhere}:reply:x',
        60_000,
        write,
        monotonicMs() + 10_000,
      ).catch((reason: unknown) => reason);

      expect(error).toBeInstanceOf(OutcomeUnknownError);
      expect(error).toMatchObject({ code: 'OUTCOME_UNKNOWN', runs: 3 });
      // A repeated enqueue mints new ids: only one with its idempotency key is safe.
      expect((error as Error).message).not.toMatch(/repeating the call is safe/);
      expect((error as Error).message).toMatch(/idempotency key/);
      expect(runs).toBe(3);
    } finally {
      await connections.onApplicationShutdown();
    }
  });

  it('says the confirmation could not be made, not that the replicas failed, when its connection never answers', async () => {
    // The confirmation connection reaches nothing: no WAIT ever runs, so no replica was asked.
    const connections = new RedisConnections({
      connection: { url: `redis://127.0.0.1:${await freePort()}` },
      commandTimeoutMs: 200,
    });
    try {
      const wait = replicaWaitFor(connections, SHORT_WAIT)!;

      const outcome = await replicatedWrite(
        wait,
        'emq:{unreached}:reply:x',
        60_000,
        async () => 'written',
        monotonicMs() + 300,
      );

      expect(outcome).toMatchObject({ result: 'written', state: 'unconfirmed' });
      expect((outcome as { reason: string }).reason).toMatch(/^the confirmation connection did not answer/);
    } finally {
      await connections.onApplicationShutdown();
    }
  });
});
