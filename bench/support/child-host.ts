import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT, WORKER_HOST_EXEC_ARGV } from './paths';

/** What every host process may send besides its replies: progress, and the failure that ends it. */
export type HostSignal = { type: 'progress'; completed: number } | { type: 'failed'; message: string };

/** How long a host may take to boot (Nest and every system's client loaded once). */
export const BOOT_TIMEOUT_MS = 120_000;

/** Forks a host entry (a compiled .js or, under ts-node, a .ts file) with an IPC channel. */
export function forkHost(entry: string, args: readonly string[]): ChildProcess {
  return fork(entry, [...args], {
    cwd: REPO_ROOT,
    execArgv: [...WORKER_HOST_EXEC_ARGV],
    env: { ...process.env, TS_NODE_PROJECT: join(REPO_ROOT, 'tsconfig.json') },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/**
 * The orchestrator's end of one host child process: it keeps the completions the host reports,
 * turns a reported failure or an exit into the error every waiting call fails with, and awaits
 * one reply at a time by its type. The hosts of `npm run bench` (worker-pool.ts) and of
 * `npm run bench:partitions` (partitions-hosts.ts) differ only in the messages they exchange.
 */
export class ChildHost<From extends { type: string }, To> {
  /** Completions the host's worker reported (every PROGRESS_EVERY_MS). */
  completed = 0;
  private failure?: Error;
  private readonly waiters = new Set<(message: From | HostSignal) => void>();

  protected constructor(
    /** How errors name the host ('bullmq worker host', 'producer host'). */
    private readonly name: string,
    protected readonly child: ChildProcess,
  ) {
    child.on('message', (message: From | HostSignal) => {
      if (message.type === 'progress')
        this.completed = (message as HostSignal & { completed: number }).completed;
      if (message.type === 'failed') {
        this.failure = new Error(`${name}: ${(message as HostSignal & { message: string }).message}`);
      }
      for (const waiter of [...this.waiters]) waiter(message);
    });
    child.on('exit', (code, signal) => {
      this.failure ??= new Error(`${name} exited (code ${code}, signal ${signal})`);
      for (const waiter of [...this.waiters]) waiter({ type: 'failed', message: this.failure.message });
    });
  }

  /** Throws if the host has reported a failure (or exited). */
  check(): void {
    if (this.failure) throw this.failure;
  }

  /** Asks the host to exit, and kills it if it has not within 15 s. */
  protected async exitWith(exitMessage: To): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    this.child.send(exitMessage as object);
    await exited;
    clearTimeout(timer);
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  protected send(message: To): void {
    this.check();
    this.child.send(message as object);
  }

  /** The host's next message of `type`; rejects on its failure, its exit or the timeout. */
  protected reply<T extends From['type']>(type: T, timeoutMs: number): Promise<Extract<From, { type: T }>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`${this.name} sent no '${type}' within ${timeoutMs} ms`));
      }, timeoutMs);
      const waiter = (message: From | HostSignal): void => {
        if (message.type !== type && message.type !== 'failed') return;
        clearTimeout(timer);
        this.waiters.delete(waiter);
        if (message.type === 'failed')
          reject(this.failure ?? new Error((message as HostSignal & { message: string }).message));
        else resolve(message as Extract<From, { type: T }>);
      };
      this.waiters.add(waiter);
    });
  }
}
