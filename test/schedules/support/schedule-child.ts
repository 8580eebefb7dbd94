import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { redisUrl } from '../../support/redis';
import { withTimeout } from '../../worker/fixtures/support';
import {
  SCHEDULE_CHILD_ENV,
  type ScheduleChildMessage,
  type ScheduleChildMode,
} from '../fixtures/schedule-child-config';

const ROOT = resolve(__dirname, '../../..');
const ENTRY = resolve(__dirname, '../fixtures/schedule-child.ts');
const BOOT_TIMEOUT_MS = 30_000;

export interface ScheduleChildOptions {
  readonly mode: ScheduleChildMode;
  readonly queue: string;
  readonly key: string;
  readonly spec: object;
  readonly block?: boolean;
}

/** A schedule child (fixtures/schedule-child.ts) in its own Node process, sharing nothing but Redis. */
export class ScheduleChild {
  private stderr = '';
  private readonly messages: ScheduleChildMessage[] = [];
  private waiters: (() => void)[] = [];
  readonly exited: Promise<NodeJS.Signals | number | null>;

  private constructor(private readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    child.on('message', (message: ScheduleChildMessage) => {
      this.messages.push(message);
      this.notify();
    });
    this.exited = new Promise((done) => {
      child.once('exit', (code, signal) => {
        this.notify();
        done(signal ?? code);
      });
    });
  }

  static spawn(options: ScheduleChildOptions): ScheduleChild {
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', ENTRY],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          TS_NODE_PROJECT: resolve(ROOT, 'tsconfig.json'),
          REDIS_URL: redisUrl(),
          [SCHEDULE_CHILD_ENV.mode]: options.mode,
          [SCHEDULE_CHILD_ENV.queue]: options.queue,
          [SCHEDULE_CHILD_ENV.key]: options.key,
          [SCHEDULE_CHILD_ENV.spec]: JSON.stringify(options.spec),
          [SCHEDULE_CHILD_ENV.block]: options.block ? '1' : '0',
        },
        stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
      },
    );
    return new ScheduleChild(child);
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Every message of a type received so far. */
  received<T extends ScheduleChildMessage['type']>(type: T): Extract<ScheduleChildMessage, { type: T }>[] {
    return this.messages.filter(
      (message): message is Extract<ScheduleChildMessage, { type: T }> => message.type === type,
    );
  }

  /** Resolves once `count` messages of `type` have arrived; fails if the child exits first. */
  async waitFor<T extends ScheduleChildMessage['type']>(
    type: T,
    count = 1,
    timeoutMs = BOOT_TIMEOUT_MS,
  ): Promise<Extract<ScheduleChildMessage, { type: T }>[]> {
    const arrived = new Promise<void>((done, fail) => {
      const check = (): void => {
        if (this.received('failed').length > 0) fail(new Error(this.received('failed')[0].error));
        else if (this.received(type).length >= count) done();
        else if (!this.alive) fail(new Error(`schedule child exited early:\n${this.stderr}`));
        else this.waiters.push(check);
      };
      check();
    });
    await withTimeout(
      arrived,
      timeoutMs,
      `${count} '${type}' message(s) from a schedule child\n${this.stderr}`,
    );
    return this.received(type);
  }

  send(message: ScheduleChildMessage): void {
    this.child.send(message);
  }

  async kill(): Promise<void> {
    if (this.alive) this.child.kill('SIGKILL');
    await this.exited;
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
}
