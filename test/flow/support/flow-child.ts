import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { redisUrl } from '../../support/redis';
import { withTimeout } from '../../worker/fixtures/support';
import {
  FLOW_QUEUES_ENV,
  WORKER_NAME_ENV,
  type FlowWorkerMessage,
  type FlowWorkerQueue,
} from '../fixtures/flow-worker-config';

const ROOT = resolve(__dirname, '../../..');
const ENTRY = resolve(__dirname, '../fixtures/flow-worker.ts');
const BOOT_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/**
 * A flow-worker (fixtures/flow-worker.ts) in its own process: a separate Node, its own Redis
 * connections and claim loops, so limits are seen to hold for workers that share nothing
 * but Redis.
 */
export class FlowChild {
  private stderr = '';
  private readyWaiters: (() => void)[] = [];
  private isReady = false;
  readonly exited: Promise<NodeJS.Signals | number | null>;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    child.on('message', (message: FlowWorkerMessage) => {
      if (message.type === 'ready') this.isReady = true;
      this.notify();
    });
    this.exited = new Promise((done) => {
      child.once('exit', (code, signal) => {
        this.notify();
        done(signal ?? code);
      });
    });
  }

  static spawn(name: string, queues: readonly FlowWorkerQueue[]): FlowChild {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', ENTRY],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          TS_NODE_PROJECT: resolve(ROOT, 'tsconfig.json'),
          REDIS_URL: redisUrl(),
          [WORKER_NAME_ENV]: name,
          [FLOW_QUEUES_ENV]: JSON.stringify(queues),
        },
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    return new FlowChild(name, child);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves once the child's claim loops run; fails if it exits first. */
  async ready(): Promise<void> {
    const booted = new Promise<void>((done, fail) => {
      const check = (): void => {
        if (this.isReady) done();
        else if (!this.alive) fail(new Error(`flow worker ${this.name} exited early:\n${this.stderr}`));
        else this.readyWaiters.push(check);
      };
      check();
    });
    await withTimeout(booted, BOOT_TIMEOUT_MS, `flow worker ${this.name} to boot\n${this.stderr}`);
  }

  /** Graceful close (the child's app.close()); SIGKILL when it does not exit in time. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.send({ type: 'stop' } satisfies FlowWorkerMessage);
    try {
      await withTimeout(this.exited, STOP_TIMEOUT_MS, `flow worker ${this.name} to exit`);
    } catch {
      if (this.alive) this.child.kill('SIGKILL');
      await this.exited;
    }
  }

  private notify(): void {
    const waiters = this.readyWaiters;
    this.readyWaiters = [];
    for (const waiter of waiters) waiter();
  }
}
