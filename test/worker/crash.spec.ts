import type { INestApplication } from '@nestjs/common';
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { QueueService } from '@app/echomq';
import { bootApp } from '../support/nest';
import { redisUrl, uniqueQueue } from '../support/redis';
import type { CrashWorkerMessage } from './fixtures/crash-worker';
import { closeAll, processorClass, withTimeout } from './fixtures/support';

const ROOT = resolve(__dirname, '../..');
const ENTRY = resolve(__dirname, 'fixtures/crash-worker.ts');

/** A worker in its own process (the fixture crash-worker.ts), killed the hard way. */
class ChildWorker {
  private stderr = '';
  private readonly started: { id: string; attempt: number }[] = [];
  private listeners: (() => void)[] = [];
  readonly exited: Promise<NodeJS.Signals | number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    child.on('message', (message: CrashWorkerMessage) => {
      if (message.type === 'started') this.started.push({ id: message.id, attempt: message.attempt });
      this.notify();
    });
    this.exited = new Promise((done) => {
      child.once('exit', (code, signal) => {
        this.notify();
        done(signal ?? code);
      });
    });
  }

  static spawn(queue: string, concurrency: number, leaseMs: number): ChildWorker {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', ENTRY],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          TS_NODE_PROJECT: resolve(ROOT, 'tsconfig.json'),
          REDIS_URL: redisUrl(),
          ECHOMQ_QUEUE: queue,
          ECHOMQ_CONCURRENCY: String(concurrency),
          ECHOMQ_LEASE_MS: String(leaseMs),
        },
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    return new ChildWorker(child);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves with the jobs the child has started once there are `count`; fails if it exits first. */
  async startedJobs(count: number, timeoutMs: number): Promise<{ id: string; attempt: number }[]> {
    const enough = new Promise<void>((done, fail) => {
      const check = (): void => {
        if (this.started.length >= count) done();
        else if (!this.alive) fail(new Error(`the worker child exited early:\n${this.stderr}`));
        else this.listeners.push(check);
      };
      check();
    });
    await withTimeout(enough, timeoutMs, `the worker child to start ${count} jobs\n${this.stderr}`);
    return [...this.started];
  }

  async kill(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
  }

  private notify(): void {
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}

const apps: INestApplication[] = [];
let child: ChildWorker | undefined;

afterEach(async () => {
  await child?.kill();
  child = undefined;
  await closeAll(apps.splice(0));
});

describe('a worker process that crashes', () => {
  it('loses no job: a second worker completes every one, in-flight ones on their second attempt', async () => {
    const queue = uniqueQueue('crash');
    const concurrency = 3;
    const total = 2 * concurrency;
    const producer = await bootApp([], { shutdownGraceMs: 300 });
    apps.push(producer);
    const queues = producer.get(QueueService);
    const ids = await queues.enqueueMany(
      queue,
      Array.from({ length: total }, (_, n) => ({ data: { n } })),
    );

    child = ChildWorker.spawn(queue, concurrency, 1_000);
    const started = await child.startedJobs(concurrency, 30_000);
    expect(started).toHaveLength(concurrency);
    expect(started.every((job) => job.attempt === 1)).toBe(true);
    expect(await queues.counts(queue)).toEqual({
      pending: total - concurrency,
      active: concurrency,
      schedule: 0,
      dead: 0,
    });
    const inFlight = new Set<string>(await queues.browse(queue, 'active'));
    expect(inFlight).toEqual(new Set(started.map((job) => job.id)));

    await child.kill(); // SIGKILL mid-jobs: no shutdown hook, no release, leases left to expire
    expect(await child.exited).toBe('SIGKILL');
    expect((await queues.counts(queue)).active).toBe(concurrency);

    const Survivor = processorClass(
      queue,
      { concurrency: 10, leaseMs: 1_000, retainCompletedMs: 60_000 },
      (job) => ({ n: (job.data as { n: number }).n, attempt: job.attempt }),
    );
    apps.push(await bootApp([Survivor], { shutdownGraceMs: 300 }));

    const results = await Promise.all(ids.map((id) => queues.waitFor(queue, id, 15_000)));
    expect(results).toEqual(ids.map((id, n) => ({ n, attempt: inFlight.has(id) ? 2 : 1 })));
    for (const id of ids) {
      expect(await queues.getJob(queue, id)).toMatchObject({
        state: 'completed',
        attempts: inFlight.has(id) ? 2 : 1,
      });
    }
    expect(await queues.counts(queue)).toEqual({ pending: 0, active: 0, schedule: 0, dead: 0 });
    expect(await queues.metrics(queue)).toMatchObject({ reaped: concurrency, completed: total });
  }, 45_000);
});
