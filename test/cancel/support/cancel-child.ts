import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { redisUrl } from '../../support/redis';
import { withTimeout } from '../../worker/fixtures/support';
import { CANCEL_QUEUE_ENV, type CancelWorkerMessage } from '../fixtures/cancel-worker-config';

const ROOT = resolve(__dirname, '../../..');
const ENTRY = resolve(__dirname, '../fixtures/cancel-worker.ts');
const BOOT_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** A cancel-worker (fixtures/cancel-worker.ts) in its own process: it shares nothing with the test but Redis. */
export class CancelChild {
  private stderr = '';
  private readonly readied: Promise<unknown>;
  private readonly exited: Promise<unknown>;

  private constructor(private readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.exited = once(child, 'exit');
    this.readied = new Promise<void>((done, fail) => {
      child.on('message', (message: CancelWorkerMessage) => message.type === 'ready' && done());
      void this.exited.then(() => fail(new Error(`the cancel worker exited early:\n${this.stderr}`)));
    });
  }

  static spawn(queue: string): CancelChild {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', ENTRY],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          TS_NODE_PROJECT: resolve(ROOT, 'tsconfig.json'),
          REDIS_URL: redisUrl(),
          [CANCEL_QUEUE_ENV]: queue,
        },
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    return new CancelChild(child);
  }

  private get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async ready(): Promise<void> {
    await withTimeout(this.readied, BOOT_TIMEOUT_MS, `the cancel worker to boot\n${this.stderr}`);
  }

  /** Graceful close (the child's app.close()); SIGKILL when it does not exit in time. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child.send({ type: 'stop' } satisfies CancelWorkerMessage);
    try {
      await withTimeout(this.exited, STOP_TIMEOUT_MS, 'the cancel worker to exit');
    } catch {
      if (this.alive) this.child.kill('SIGKILL');
      await this.exited;
    }
  }
}
