import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { setTimeout as work } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { EchoMqError, JobAbortedError, QueueService, type Job } from '@app/echomq';
import type { FaultProxy } from '../support/fault-proxy';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { deferred, DeferredMap, loopOf, processorClass, withTimeout } from '../worker/fixtures/support';
import {
  aborted,
  Apps,
  commandConnectionClosed,
  commandConnectionReady,
  FAST,
  members,
  metricsOf,
  nextNodeId,
  rowIds,
  setsHolding,
  startProxy,
  stopWhenDrained,
} from './support/faults';
import type { SilentWorkerMessage } from './support/silent-close-worker';

/**
 * Issue 8, item 4: a network that goes silent under a running worker and a producer. The
 * proxy's silence() stops forwarding both ways on every socket and keeps them open (no data,
 * no FIN, no RST: a dropped NAT entry), and silences new connections too until heal(). Only
 * the client's command deadline (commandTimeoutMs, small here) and its local clocks can notice.
 *
 * Why these tests fail on 7f436bd (before the hardening): no command had a deadline, so a call
 * on a silent socket waited for the kernel to give up (about 15 minutes); the heartbeat aborted
 * a job only when an extend failed, which on a silent socket it never does; shutdown awaited its
 * release call unbounded; and ioredis resent unanswered calls after a reconnect, which ran
 * settled transitions a second time. Each test says which of these it trips over.
 */
const LEASE_MS = 1_500;
/** Hang detectors for things that must settle within a few deadlines; not timing assertions. */
const SETTLES_MS = 10_000;
/** A silent worker's idle claim loop waits out its wake wait (up to 5 s) plus its watchdog (2 s). */
const RECOVERS_MS = 20_000;
const SHUTDOWN_GRACE_MS = 500;
const CHILD_ENTRY = resolve(__dirname, 'support/silent-close-worker.ts');
const ROOT = resolve(__dirname, '../..');

const apps = new Apps();
const children: ChildProcess[] = [];
let proxy: FaultProxy;
let direct: Redis;

/** A producer on the real server: what it enqueues is not affected by the proxy's faults. */
async function directProducer(): Promise<QueueService> {
  return (await apps.boot([], redisUrl())).get(QueueService);
}

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
  for (const child of children.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  // Silenced sockets stay dead until their client gives up: reset them, so every app closes at once.
  await proxy.heal();
  proxy.closeAll();
  await apps.closeEvery();
  await stopWhenDrained(proxy);
});

describe('a silent network', () => {
  it('fails a producer’s enqueue with a typed error while silent, and enqueues again after heal()', async () => {
    // 7f436bd: the script call sits on the silent socket with no deadline and never settles: the
    // withTimeout below fails. (Nor would the producer recover after heal(): its socket stays dead.)
    const queue = uniqueQueue('silent-producer');
    const producer = await apps.boot([], proxy.url);
    const queues = producer.get(QueueService);
    await queues.enqueue(queue, { warm: true }); // registered, and the connection is up

    proxy.silence();
    const outcome = await withTimeout(
      queues.enqueue(queue, { during: true }).then(
        (id) => ({ resolved: id }),
        (error: unknown) => error,
      ),
      SETTLES_MS,
      'the enqueue sent into the silence to settle',
    );

    expect(outcome).toBeInstanceOf(EchoMqError);
    expect(['OUTCOME_UNKNOWN', 'REDIS_UNAVAILABLE']).toContain((outcome as EchoMqError).code);

    await proxy.heal();
    // The silent socket is replaced by the client itself (its deadline destroyed it); no restart.
    await commandConnectionReady(producer);
    const id = await withTimeout(
      queues.enqueue(queue, { after: true }),
      SETTLES_MS,
      'an enqueue after heal()',
    );
    expect(await setsHolding(direct, queue, id)).toEqual(['pending']);
  });

  it('keeps a worker working after heal(): jobs enqueued during and after the silence complete', async () => {
    // 7f436bd: no call on the worker's command socket has a deadline, so the socket is never
    // dropped (the first wait below fails); it would stay silent after heal() as a half-open
    // socket does, every claim, extend and reaper call waiting on it, and no job enqueued during
    // or after the silence would ever be claimed.
    const queue = uniqueQueue('silent-worker');
    const completed = new DeferredMap<void>();
    const Worker = processorClass(queue, { concurrency: 2, leaseMs: LEASE_MS }, () => 'ok');
    const worker = await apps.boot([Worker], proxy.url);
    loopOf(worker, queue).events.on('completed', (id) => completed.get(id).resolve());
    const queues = await directProducer();
    const first = await queues.enqueue(queue, { n: 0 });
    await withTimeout(completed.get(first).promise, SETTLES_MS, 'a job before the silence');

    const noticed = commandConnectionClosed(worker);
    proxy.silence();
    // The reaper calls Redis every 100 ms: its deadline is what finds the socket dead.
    await withTimeout(noticed, SETTLES_MS, 'the worker to drop its silent command socket');
    const during = await queues.enqueueMany(queue, [{ data: { n: 1 } }, { data: { n: 2 } }]);
    await proxy.heal();
    const after = await queues.enqueueMany(
      queue,
      Array.from({ length: 3 }, (_, n) => ({ data: { n: 3 + n } })),
    );

    await withTimeout(
      Promise.all([...during, ...after].map((id) => completed.get(id).promise)),
      RECOVERS_MS,
      'the jobs enqueued during and after the silence to complete',
    );
    expect(await members(direct, queue)).toEqual({ pending: [], active: [], schedule: [], dead: [] });
    expect(await metricsOf(direct, queue)).toMatchObject({ completed: 6 });
  });

  it('aborts a job in progress whose lease ran out locally, while the network is still silent', async () => {
    // 7f436bd: the heartbeat's extend hangs on the silent socket; the old keeper aborted a job
    // only in the catch of a failed beat, which never comes, and a hanging beat blocked the next
    // ones: job.signal never fires.
    const queue = uniqueQueue('silent-lease');
    const started = deferred<Job>();
    const abortedWith = deferred<{ reason: unknown; bytesToClient: number }>();
    const Worker = processorClass(queue, { concurrency: 1, leaseMs: LEASE_MS }, async (job) => {
      started.resolve(job);
      const reason = await aborted(job.signal);
      abortedWith.resolve({ reason, bytesToClient: proxy.stats.bytesToClient });
      throw reason;
    });
    await apps.boot([Worker], proxy.url);
    const id = await (await directProducer()).enqueue(queue, {});
    await withTimeout(started.promise, SETTLES_MS, 'the job to start');

    proxy.silence();
    const silentFrom = proxy.stats.bytesToClient;

    const { reason, bytesToClient } = await withTimeout(
      abortedWith.promise,
      SETTLES_MS,
      'the handler to see its signal abort while the network is silent',
    );
    expect(reason).toBeInstanceOf(JobAbortedError);
    expect(reason).toMatchObject({ id, reason: 'lease-lost' });
    // Still silent when it fired: not one byte reached the worker since silence().
    expect(bytesToClient).toBe(silentFrom);
  });

  it(
    'resolves app.close() of a worker while the network is silent',
    async () => {
      // 7f436bd: stop() awaits its release call (and QUIT) on the silent socket, with no
      // deadline: app.close() never resolves and jest's testTimeout fails the test.
      const queue = uniqueQueue('silent-close');
      const started = new DeferredMap<void>();
      // Handlers that ignore their signal and never return: the worst case for a shutdown.
      const Worker = processorClass(queue, { concurrency: 2, leaseMs: LEASE_MS }, (job) => {
        started.get(job.id).resolve();
        return new Promise<never>(() => undefined);
      });
      const worker = await apps.boot([Worker], proxy.url, { shutdownGraceMs: SHUTDOWN_GRACE_MS });
      // An event reader with a subscriber, on its own blocking connection through the proxy.
      await worker.get(QueueService).subscribe(queue, () => undefined);
      const ids = await (await directProducer()).enqueueMany(queue, [{ data: 1 }, { data: 2 }]);
      await withTimeout(
        Promise.all(ids.map((id) => started.get(id).promise)),
        SETTLES_MS,
        'both jobs to start',
      );

      proxy.silence();
      // The bound is about grace + 3 deadlines + 1 s for aborted handlers + the QUIT's deadline;
      // jest's timeout for this test is far above it, so a hang fails here.
      await expect(worker.close()).resolves.toBeUndefined();
      apps.forget(worker);

      // Nothing is lost: the release could not reach Redis, so both jobs wait in active for
      // their leases to run out and the reaper to return them.
      expect((await members(direct, queue)).active).toEqual([...ids].sort());
    },
    30_000 + SHUTDOWN_GRACE_MS + 4 * FAST.commandTimeoutMs,
  );

  it('lets a worker process exit by itself after app.close() while the network is silent', async () => {
    // 7f436bd: app.close() never resolves (see above), so the child never reports 'closed'.
    // On top, anything app.close() left running (an event reader re-reading, a reaper timer,
    // a reconnecting client) would keep the child alive after it cut its IPC channel.
    const queue = uniqueQueue('silent-exit');
    const messages: SilentWorkerMessage[] = [];
    let stderr = '';
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', CHILD_ENTRY],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          TS_NODE_PROJECT: resolve(ROOT, 'tsconfig.json'),
          REDIS_URL: proxy.url,
          ECHOMQ_QUEUE: queue,
          ECHOMQ_NODE_ID: String(nextNodeId()),
          ECHOMQ_LEASE_MS: String(LEASE_MS),
          ECHOMQ_COMMAND_TIMEOUT_MS: String(FAST.commandTimeoutMs),
          ECHOMQ_REPLAY_WINDOW_MS: String(FAST.replayWindowMs),
          ECHOMQ_SHUTDOWN_GRACE_MS: String(SHUTDOWN_GRACE_MS),
        },
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    children.push(child);
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | NodeJS.Signals | null>((done) =>
      child.once('exit', (code, signal) => done(signal ?? code)),
    );
    const message = (type: SilentWorkerMessage['type']): Promise<SilentWorkerMessage> =>
      new Promise((done) => {
        const seen = messages.find((m) => m.type === type);
        if (seen) return done(seen);
        const listener = (m: SilentWorkerMessage): void => {
          if (m.type !== type) return;
          child.off('message', listener);
          done(m);
        };
        child.on('message', listener);
      });
    child.on('message', (m: SilentWorkerMessage) => messages.push(m));

    await withTimeout(message('ready'), 30_000, `the child worker to boot\n${stderr}`);
    await (await directProducer()).enqueue(queue, {});
    await withTimeout(message('started'), SETTLES_MS, `the child's job to start\n${stderr}`);

    proxy.silence();
    child.send({ type: 'close' });

    await withTimeout(message('closed'), 20_000, `app.close() in the child\n${stderr}`);
    expect(messages.map((m) => m.type)).not.toContain('close-failed');
    // No process.exit in the child: it ends only when nothing is left that keeps it alive.
    await expect(withTimeout(exited, 10_000, `the child to exit by itself\n${stderr}`)).resolves.toBe(0);
  }, 60_000);

  it('loses nothing when every connection is reset mid-run: each job completes exactly once', async () => {
    // 7f436bd: after each reset ioredis resent what was unanswered. A resent completion found its
    // job already gone from active and read STALE (a 'stale' event, no 'completed' for a job that
    // completed), a resent claim claimed a second batch while the first sat in active until its
    // lease ran out, and a resent enqueue failed its callers with JobExistsError.
    const queue = uniqueQueue('reset-mid-run');
    const waves = 6;
    const perWave = 10;
    const total = waves * perWave;
    const resetEvery = 6;
    const runs = new Map<string, number[]>();
    const completions = new Map<string, number>();
    const done = new DeferredMap<void>();
    const stale: string[] = [];
    let resets = 0;
    const Worker = processorClass(queue, { concurrency: 4, leaseMs: 2_000 }, async (job: Job) => {
      runs.set(job.id, [...(runs.get(job.id) ?? []), job.attempt]);
      await work(15); // the job's own work: keeps claims, extends and completions overlapping
      return job.id;
    });
    const worker = await apps.boot([Worker], proxy.url);
    const loop = loopOf(worker, queue);
    loop.events.on('stale', (id) => stale.push(id));
    loop.events.on('completed', (id) => {
      completions.set(id, (completions.get(id) ?? 0) + 1);
      done.get(id).resolve();
      const count = [...completions.values()].reduce((sum, n) => sum + n, 0);
      if (count % resetEvery === 0 && count < total) {
        resets += 1;
        proxy.closeAll(); // the producer's and the worker's sockets alike, whatever is on them
      }
    });
    // The producer goes through the proxy too: its enqueues meet the resets as well.
    const producer = (await apps.boot([], proxy.url)).get(QueueService);
    const ids: string[] = [];
    for (let wave = 0; wave < waves; wave++) {
      const batch = Array.from({ length: perWave }, (_, n) => producer.enqueue(queue, { wave, n }));
      ids.push(...(await withTimeout(Promise.all(batch), SETTLES_MS, `the enqueues of wave ${wave}`)));
    }

    await withTimeout(
      Promise.all(ids.map((id) => done.get(id).promise)),
      RECOVERS_MS,
      'every enqueued job to complete',
    );

    expect(new Set(ids).size).toBe(total);
    expect(resets).toBeGreaterThanOrEqual(3);
    for (const id of ids) {
      expect({ id, completions: completions.get(id) }).toEqual({ id, completions: 1 });
      expect({ id, runs: runs.get(id) }).toEqual({ id, runs: [1] });
    }
    expect(stale).toEqual([]);
    expect(loop.runner.staleSettlements).toBe(0);
    expect(await members(direct, queue)).toEqual({ pending: [], active: [], schedule: [], dead: [] });
    expect(await rowIds(direct, queue)).toEqual([]);
    const metrics = await metricsOf(direct, queue);
    // Each job enqueued once, claimed once (a repeated claim read the first one back), completed once.
    expect(metrics).toMatchObject({ enqueued: total, claimed: total, completed: total });
    expect(metrics.stale ?? 0).toBe(0);
  });
});
