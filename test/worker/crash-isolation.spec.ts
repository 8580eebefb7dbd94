import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import { EchoMqModule, QueueService, type Job } from '@app/echomq';
import { claimJobs, reapExpired, type ScriptContext } from '@app/echomq/internal';
import { CapturedLog } from '../support/captured-log';
import { bootApp } from '../support/nest';
import { connect, redisUrl, uniqueQueue } from '../support/redis';
import { closeAll, deferred, loopOf, processorClass, waitUntil, withTimeout } from './fixtures/support';

const ROOT = resolve(__dirname, '../..');
const LEASE_MS = 1_000;

/**
 * The worker process of these tests, run as plain JavaScript (node -e, with ts-node loading
 * the library): one processor on each queue of ECHOMQ_QUEUES, booted with its processors
 * stopped; each starts claiming when the parent sends its queue's name (so a process can be
 * booted ahead of its turn).
 * Job names: 'block' never finishes, 'poison' SIGKILLs its own process as its handler starts,
 * anything else takes 20 ms. Each handler start and end is told to the parent with the
 * time on the parent's clock (performance.timeOrigin + now(): one host, one clock).
 */
const WORKER_SOURCE = `
require('reflect-metadata');
const { Module } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { EchoMqModule, Processor } = require('@app/echomq');
const { ProcessorExplorer } = require('@app/echomq/internal');
const now = () => performance.timeOrigin + performance.now();
class Handler {
  async process(job) {
    const run = { id: job.id, attempt: job.attempt };
    if (job.name === 'poison') {
      process.send({ type: 'started', ...run, at: now() }, () => process.kill(process.pid, 'SIGKILL'));
      return new Promise(() => undefined);
    }
    process.send({ type: 'started', ...run, at: now() });
    if (job.name === 'block') return new Promise(() => undefined);
    await new Promise((done) => setTimeout(done, 20));
    process.send({ type: 'ended', ...run, at: now() });
    return job.attempt;
  }
}
const processors = process.env.ECHOMQ_QUEUES.split(',').map((queue) => {
  const Each = class extends Handler {};
  Processor(queue, { concurrency: 20, leaseMs: ${LEASE_MS}, retainCompletedMs: 60000 })(Each);
  return Each;
});
class WorkerModule {}
Module({
  imports: [EchoMqModule.forRoot({ connection: { url: process.env.REDIS_URL }, startProcessors: false })],
  providers: processors,
})(WorkerModule);
NestFactory.createApplicationContext(WorkerModule, { logger: ['error'] }).then((app) => {
  process.on('message', (queue) => app.get(ProcessorExplorer).startQueue(queue));
  process.send({ type: 'ready' });
});
`;

interface WorkerMessage {
  readonly type: 'ready' | 'started' | 'ended';
  readonly id: string;
  readonly attempt: number;
  readonly at: number;
}

/** One handler run: from its start to its end, or to its process's death. */
interface Run {
  readonly id: string;
  readonly attempt: number;
  readonly start: number;
  end: number;
}

/** A worker process of WORKER_SOURCE: its handler runs, and when it died. */
class WorkerProcess {
  readonly runs: Run[] = [];
  readonly ready: Promise<void>;
  readonly exited: Promise<NodeJS.Signals | number | null>;
  private stderr = '';

  constructor(private readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    let isReady!: () => void;
    this.ready = new Promise<void>((done) => (isReady = done));
    child.on('message', (message: WorkerMessage) => {
      if (message.type === 'ready') isReady();
      if (message.type === 'started')
        this.runs.push({ id: message.id, attempt: message.attempt, start: message.at, end: Infinity });
      if (message.type === 'ended') {
        const run = this.runs.find((each) => each.id === message.id && each.attempt === message.attempt);
        if (run) run.end = message.at;
      }
    });
    this.exited = new Promise((done) =>
      child.once('exit', (code, signal) => {
        // Runs still open ended with the process.
        const at = performance.timeOrigin + performance.now();
        for (const run of this.runs) run.end = Math.min(run.end, at);
        done(signal ?? code);
      }),
    );
  }

  static spawn(...queues: string[]): WorkerProcess {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', '-e', WORKER_SOURCE],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          TS_NODE_PROJECT: resolve(ROOT, 'tsconfig.json'),
          REDIS_URL: redisUrl(),
          ECHOMQ_QUEUES: queues.join(','),
        },
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    return new WorkerProcess(child);
  }

  /** Starts claiming from `queue`. */
  async go(queue: string): Promise<void> {
    await withTimeout(this.ready, 30_000, `a worker process to boot\n${this.stderr}`);
    this.child.send(queue);
  }

  async startedRuns(count: number): Promise<Run[]> {
    await waitUntil(() => this.runs.length >= count, `${count} handler starts\n${this.stderr}`, 15_000);
    return [...this.runs];
  }

  async death(): Promise<NodeJS.Signals | number | null> {
    return withTimeout(this.exited, 15_000, `the worker process to die\n${this.stderr}`);
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }
}

/** Pairs of runs of one process that overlap where one of them is a crash suspect's (attempt 2 or more). */
function suspectsBeside(runs: readonly Run[]): string[] {
  const found: string[] = [];
  for (const a of runs) {
    if (a.attempt < 2) continue;
    for (const b of runs) {
      if (b !== a && b.start < a.end && a.start < b.end)
        found.push(`${a.id}@${a.attempt} with ${b.id}@${b.attempt}`);
    }
  }
  return found;
}

/** The ids of each 'claimed' entry of the queue's event stream, oldest first. */
async function claimedEvents(redis: Redis, ctx: ScriptContext): Promise<string[]> {
  const entries = await redis.xrange(ctx.keys.events, '-', '+');
  return entries.flatMap(([, flat]) => {
    const at = flat.indexOf('type');
    return flat[at + 1] === 'claimed' ? [flat[flat.indexOf('ids') + 1]] : [];
  });
}

/** The reaper, from the test: every expired lease back to pending (or dead), until stopped. */
function reapEvery(ctx: ScriptContext, ms: number): () => void {
  const timer = setInterval(() => void reapExpired(ctx, 100).catch(() => undefined), ms);
  return () => clearInterval(timer);
}

/** A processor in this process whose runs are recorded as WorkerProcess records them. */
function recordingSurvivor(queue: string, runs: Run[]) {
  const options = { concurrency: 10, leaseMs: LEASE_MS, retainCompletedMs: 60_000 };
  return processorClass(queue, options, async (job) => {
    const run: Run = {
      id: job.id,
      attempt: job.attempt,
      start: performance.timeOrigin + performance.now(),
      end: Infinity,
    };
    runs.push(run);
    await new Promise((done) => setTimeout(done, 20));
    run.end = performance.timeOrigin + performance.now();
    return job.attempt;
  });
}

const batchQueue = uniqueQueue('isolation-batch');
const poisonQueue = uniqueQueue('isolation-poison');
const apps: INestApplication[] = [];
let first: WorkerProcess;
let later: WorkerProcess[];
let redis: Redis;
let queues: QueueService;
/** The jobs the first process held when it died: five blocking ones, then the poison among twelve. */
let batch: string[];
let poisonIds: string[];

/**
 * The crash both tests start from: one worker process serves both queues; it claims the five
 * blocking jobs, then (still running them) all thirteen of the other queue in one call, and the
 * poison among them SIGKILLs it.
 */
beforeAll(async () => {
  // Booted together, ahead of their turn: each boot costs seconds of transpiling.
  first = WorkerProcess.spawn(batchQueue, poisonQueue);
  later = [WorkerProcess.spawn(poisonQueue), WorkerProcess.spawn(poisonQueue)];
  redis = connect();
  const producer = await bootApp([], { shutdownGraceMs: 300 });
  apps.push(producer);
  queues = producer.get(QueueService);
  batch = await queues.enqueueMany(
    batchQueue,
    Array.from({ length: 5 }, (_, n) => ({ data: { n }, name: 'block' })),
  );
  const neighbour = (n: number): { data: { n: number }; name: string } => ({ data: { n }, name: 'work' });
  poisonIds = await queues.enqueueMany(poisonQueue, [
    ...Array.from({ length: 6 }, (_, n) => neighbour(n)),
    { data: { n: -1 }, name: 'poison' },
    ...Array.from({ length: 6 }, (_, n) => neighbour(6 + n)),
  ]);
  await first.go(batchQueue);
  await first.startedRuns(batch.length);
  await first.go(poisonQueue);
  expect(await first.death()).toBe('SIGKILL');
  await Promise.all(later.map((worker) => worker.ready));
}, 60_000);

afterAll(async () => {
  await Promise.all([first, ...later].map((worker) => worker.kill()));
  await closeAll(apps.splice(0));
  await redis.quit();
});

describe('a job that crashes its worker does not take the jobs claimed beside it down with it', () => {
  it('a killed process’s whole batch comes back suspect, and a new worker runs each suspect alone', async () => {
    const queue = batchQueue;
    const ctx = queues.context(queue);
    const [claimed] = await claimedEvents(redis, ctx);
    expect(claimed.split(',').sort()).toEqual([...batch].sort());

    // Their leases run out with nobody to extend them: the reaper marks each one a crash suspect.
    let reaped = 0;
    await waitUntil(
      async () => (reaped += (await reapExpired(ctx, 100)).toPending) === batch.length,
      'the batch reaped',
    );
    for (const id of batch) expect(await redis.hget(ctx.keys.job(id), 'x')).toBe('1');
    const fresh = await queues.enqueueMany(
      queue,
      Array.from({ length: 3 }, (_, n) => ({ data: { n }, name: 'work' })),
    );

    const runs: Run[] = [];
    apps.push(await bootApp([recordingSurvivor(queue, runs)], { shutdownGraceMs: 300 }));
    const results = await Promise.all([...batch, ...fresh].map((id) => queues.waitFor(queue, id, 10_000)));

    // Each suspect ran with nothing beside it, on its second attempt: one claim spent by the
    // crash, one by its own run, out of the default three.
    expect(results).toEqual([...batch.map(() => 2), ...fresh.map(() => 1)]);
    expect(suspectsBeside(runs)).toEqual([]);
    const suspects = new Set<string>(batch);
    expect(runs.filter((run) => suspects.has(run.id)).map((run) => run.attempt)).toEqual(batch.map(() => 2));
    for (const id of batch) {
      expect(await queues.getJob(queue, id)).toMatchObject({ state: 'completed', attempts: 2 });
      expect(await redis.hget(ctx.keys.job(id), 'x')).toBeNull();
    }
    expect(await queues.metrics(queue)).toMatchObject({ reaped: batch.length, isolated: batch.length });
  }, 30_000);

  it('a poison job dies after exactly the default maxAttempts, and the neighbours claimed with it complete', async () => {
    const queue = poisonQueue;
    const ctx = queues.context(queue);
    const poison = poisonIds[6];
    const neighbours = poisonIds.filter((id) => id !== poison);
    const [claimed] = await claimedEvents(redis, ctx);
    expect(claimed.split(',').sort()).toEqual([...poisonIds].sort());
    const stopReaping = reapEvery(ctx, 100);
    try {
      // Each later process runs what it claims alone, so the poison kills only itself.
      for (const worker of later) {
        await worker.go(queue);
        expect(await worker.death()).toBe('SIGKILL');
      }
      await waitUntil(
        async () => (await queues.getJob(queue, poison))?.state === 'dead',
        'the poison job dead',
      );
    } finally {
      stopReaping();
    }
    expect(await queues.getJob(queue, poison)).toMatchObject({
      state: 'dead',
      attempts: 3,
      lastError: 'lease expired during attempt 3',
    });

    const runs: Run[] = [];
    apps.push(await bootApp([recordingSurvivor(queue, runs)], { shutdownGraceMs: 300 }));
    const results = await Promise.all(neighbours.map((id) => queues.waitFor(queue, id, 10_000)));
    expect(results).toEqual(neighbours.map(() => 2));
    for (const id of neighbours)
      expect(await queues.getJob(queue, id)).toMatchObject({ state: 'completed', attempts: 2 });
    // After the first death every run was a suspect's, with nothing beside it in its process.
    for (const worker of later) expect(suspectsBeside(worker.runs)).toEqual([]);
    expect(suspectsBeside(runs)).toEqual([]);
    expect(later.map((worker) => worker.runs.filter((run) => run.id === poison).length)).toEqual([1, 1]);
  }, 30_000);
});

/** Makes a pending job a crash suspect as a crash would: claimed, its lease run out, reaped. */
async function crashed(ctx: ScriptContext, id: string): Promise<void> {
  const { jobs } = await claimJobs(ctx, { count: 1, leaseMs: 60_000, claimantPrefix: `crashed-${id}` });
  expect(jobs.map((job) => job.id)).toEqual([id]);
  await ctx.redis.zadd(ctx.keys.active, 'XX', 1, id);
  expect(await reapExpired(ctx, 10)).toMatchObject({ toPending: 1 });
}

/** An application whose log lines are kept, with one processor on `queue` (handler per test). */
async function bootLogged(log: CapturedLog, queue: string, handler: (job: Job) => unknown, concurrency = 5) {
  const options = { concurrency, leaseMs: LEASE_MS, retainCompletedMs: 60_000 };
  const moduleRef = await Test.createTestingModule({
    imports: [EchoMqModule.forRoot({ connection: { url: redisUrl() }, shutdownGraceMs: 300 })],
    providers: [processorClass(queue, options, handler)],
  })
    .setLogger(log)
    .compile();
  const app = moduleRef.createNestApplication({ logger: log });
  apps.push(app);
  await app.init();
  return app;
}

describe('a worker with other jobs in flight when a crash suspect comes next', () => {
  it('takes the work behind the suspect, then runs the suspect alone once nothing else runs', async () => {
    const queue = uniqueQueue('isolation-busy');
    const ctx = queues.context(queue);
    const [suspect] = await queues.enqueueMany(queue, [{ data: { n: 0 } }]);
    await crashed(ctx, suspect);
    // A job of a higher level is claimed first, and runs until the test lets it go; the walk
    // then meets the suspect, older than the fresh job behind it.
    const busy = await queues.enqueue(queue, { n: 1 }, { priority: 9 });
    const fresh = await queues.enqueue(queue, { n: 2 });
    const release = deferred();
    const runs: Run[] = [];
    const log = new CapturedLog();
    const app = await bootLogged(log, queue, async (job) => {
      const run: Run = { id: job.id, attempt: job.attempt, start: performance.now(), end: Infinity };
      runs.push(run);
      if (job.id === busy) await release.promise;
      run.end = performance.now();
    });
    const loop = loopOf(app, queue);
    // The suspect was skipped: the fresh job ran beside the busy one, and the loop now waits
    // for the process to empty (no more work to take meanwhile).
    await queues.waitFor(queue, fresh, 10_000);
    await waitUntil(() => loop.isolating, 'the loop waiting to run the suspect alone');
    expect(runs.map((run) => run.id)).toEqual([busy, fresh]);
    release.resolve();
    await Promise.all([busy, suspect].map((id) => queues.waitFor(queue, id, 10_000)));

    expect(runs.map((run) => `${run.id}@${run.attempt}`)).toEqual([
      `${busy}@1`,
      `${fresh}@1`,
      `${suspect}@2`,
    ]);
    const [first, second, alone] = runs;
    expect(alone.start).toBeGreaterThanOrEqual(Math.max(first.end, second.end));
    expect(loop.isolating).toBe(false);
    expect(
      log.matching((line) => line.message.includes(`Job ${suspect} (attempt 2) runs alone`)),
    ).toHaveLength(1);
    // It ran as soon as the process was empty, not at the bound of one lease.
    expect(log.matching((line) => line.level === 'warn')).toEqual([]);
  });

  it('lets a loop busy with other work skip a suspect, then empty its process and run it alone', async () => {
    const queue = uniqueQueue('isolation-skip');
    const ctx = queues.context(queue);
    const [first, suspect] = await queues.enqueueMany(queue, [{ data: { n: 0 } }, { data: { n: 1 } }]);
    // The second oldest is the suspect (claimed, its lease run out, reaped): the first claim,
    // with nothing held, takes the oldest; every later one is sent while an outcome is on its
    // way, and finds work behind the suspect, which each job of this queue keeps adding.
    await redis.zadd(ctx.keys.pending, 1, first);
    await crashed(ctx, suspect);
    await redis.zadd(ctx.keys.pending, 0, first);
    const starts: string[] = [];
    let feeding = true;
    const log = new CapturedLog();
    await bootLogged(
      log,
      queue,
      async (job) => {
        starts.push(job.id);
        if (job.id !== suspect && feeding) await queues.enqueue(queue, { n: starts.length });
      },
      1,
    );
    await queues.waitFor(queue, suspect, 10_000);
    feeding = false;

    expect(starts.indexOf(suspect)).toBeGreaterThan(2);
    expect(starts.filter((id) => id === suspect)).toHaveLength(1);
    expect((await queues.getJob(queue, suspect))?.attempts).toBe(2);
    expect(log.matching((line) => line.message.includes('this process claims nothing more'))).toHaveLength(1);
    expect(log.matching((line) => line.level === 'warn')).toEqual([]);
  });

  it('still completes a suspect that waits for another job of its process, claimed beside it after one lease', async () => {
    const queue = uniqueQueue('isolation-valve');
    const ctx = queues.context(queue);
    const [suspect] = await queues.enqueueMany(queue, [{ data: { n: 0 } }]);
    await crashed(ctx, suspect);
    const log = new CapturedLog();
    let followUp = '';
    await bootLogged(log, queue, async (job) => {
      if (job.id !== suspect) return 'follow-up';
      // A follow-up only a claim of this process can start, while the suspect holds it alone.
      followUp = await queues.enqueue(queue, { n: 1 });
      return queues.waitFor(queue, followUp, 10_000);
    });
    expect(await queues.waitFor(queue, suspect, 10_000)).toBe('follow-up');
    expect(await queues.getJob(queue, followUp)).toMatchObject({ state: 'completed', attempts: 1 });
    const valve = log.matching(
      (line) => line.level === 'warn' && line.message.includes('has run alone for a lease'),
    );
    expect(valve).toHaveLength(1);
  });
});
