import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, openSync, closeSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHILD_EXEC_ARGV, childEntry } from './paths';
import type { ChildMessage, ProducerChildConfig, WorkerChildConfig } from './child-config';

/** How long a child may take to boot before the scenario gives up on it. */
const BOOT_TIMEOUT_MS = 60_000;

/**
 * Options of one child process. `clockOffset` runs it under libfaketime (Debian's faketime),
 * so every wall-clock read of the process is off by that much ('+5m', '-5m'); its monotonic
 * clock is left alone, so timers still fire on time.
 */
export interface ChildOptions {
  readonly clockOffset?: string;
  /**
   * A file holding libfaketime's offset ('+0', '+300', '-300': seconds), read again on every
   * wall-clock call: writing it steps the child's wall clock mid-run, as NTP or an operator
   * stepping the clock would (see stepClock). The monotonic clock is left alone. Wins over
   * clockOffset.
   */
  readonly clockFile?: string;
}

function faketimeLibrary(): string {
  for (const base of [
    '/usr/lib/x86_64-linux-gnu/faketime',
    '/usr/lib/aarch64-linux-gnu/faketime',
    '/usr/lib/faketime',
  ]) {
    const path = join(base, 'libfaketime.so.1');
    if (existsSync(path)) return path;
  }
  for (const dir of readdirSync('/usr/lib')) {
    const path = join('/usr/lib', dir, 'faketime', 'libfaketime.so.1');
    if (existsSync(path)) return path;
  }
  throw new Error('libfaketime not found: install the faketime package (apt-get install faketime)');
}

function clockEnv(offset: string | undefined, file: string | undefined): NodeJS.ProcessEnv {
  if (file !== undefined) {
    return {
      LD_PRELOAD: faketimeLibrary(),
      FAKETIME_TIMESTAMP_FILE: file,
      // Re-read the file on every call (libfaketime caches it for 10 s by default).
      FAKETIME_NO_CACHE: '1',
      FAKETIME_DONT_FAKE_MONOTONIC: '1',
    };
  }
  if (offset === undefined) return {};
  return { LD_PRELOAD: faketimeLibrary(), FAKETIME: offset, FAKETIME_DONT_FAKE_MONOTONIC: '1' };
}

/**
 * Sets the wall-clock offset of every child started with `clockFile: file`, at once, in
 * seconds from the real time (300 is five minutes ahead, -300 behind). Create the file with
 * an offset (0) before the child starts: libfaketime reads it from the first clock call.
 */
export function stepClock(file: string, offsetSeconds: number): void {
  // Written aside and renamed over it: a child reading mid-write would see an empty file.
  const next = `${file}.next`;
  writeFileSync(next, `${offsetSeconds >= 0 ? '+' : ''}${offsetSeconds}\n`);
  renameSync(next, file);
}

/** One child of the orchestrator: a worker or a producer, started with fork and IPC. */
export class ChildHandle {
  private child?: ChildProcess;
  private exit?: Promise<number | null>;
  private readonly listeners: ((message: ChildMessage) => void)[] = [];
  /** Pids of every incarnation this handle started. */
  readonly pids: number[] = [];

  constructor(
    private readonly entry: string,
    private readonly config: WorkerChildConfig | ProducerChildConfig,
    private readonly options: ChildOptions = {},
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves once the child's exit, whenever it comes (immediately if it is not running). */
  get exited(): Promise<number | null> {
    return this.exit ?? Promise.resolve(null);
  }

  onMessage(listener: (message: ChildMessage) => void): void {
    this.listeners.push(listener);
  }

  /** Starts a new incarnation and resolves when it says it is ready. Its stderr goes to <ledgerDir>/<pid>.log. */
  async start(): Promise<void> {
    const log = openSync(join(this.config.ledgerDir, `child-${Date.now()}-${this.pids.length}.log`), 'a');
    const child = fork(this.entry, [], {
      execArgv: [...CHILD_EXEC_ARGV],
      env: {
        ...process.env,
        ...clockEnv(this.options.clockOffset, this.options.clockFile),
        EMQ_CHAOS: JSON.stringify(this.config),
      },
      stdio: ['ignore', log, log, 'ipc'],
    });
    closeSync(log);
    this.child = child;
    if (child.pid !== undefined) this.pids.push(child.pid);
    this.exit = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    child.on('message', (message: ChildMessage) => this.listeners.forEach((listener) => listener(message)));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${this.entry} did not boot in ${BOOT_TIMEOUT_MS} ms`)),
        BOOT_TIMEOUT_MS,
      );
      child.on('message', (message: ChildMessage) => {
        if (message.type !== 'ready') return;
        clearTimeout(timer);
        resolve();
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`${this.entry} exited before it was ready (code ${code}, signal ${signal})`));
      });
    });
  }

  /** Sends a signal and, for one that ends the process, waits for its exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    child.kill(signal);
    if (signal === 'SIGKILL' || signal === 'SIGTERM') await this.exit;
  }
}

export function workerChild(config: WorkerChildConfig, options?: ChildOptions): ChildHandle {
  return new ChildHandle(childEntry('worker-child'), config, options);
}

/** What `workerChildren` fills in: the failure scenarios' workers take 20 jobs at once and retry almost forever. */
export type ScenarioWorkerConfig = Omit<WorkerChildConfig, 'concurrency' | 'maxAttempts'>;

/**
 * `count` worker children (not started: the caller holds them first, so a failed start still
 * has them cleaned up) with 20 slots each and 1,000 attempts a job, so no job dies of the fault.
 */
export function workerChildren(count: number, config: ScenarioWorkerConfig): ChildHandle[] {
  const full: WorkerChildConfig = { ...config, concurrency: 20, maxAttempts: 1_000 };
  return Array.from({ length: count }, () => workerChild(full));
}

export function producerChild(config: ProducerChildConfig, options?: ChildOptions): ChildHandle {
  return new ChildHandle(childEntry('producer-child'), config, options);
}

/** Resolves with the producer's final counts once it reports it has finished. */
export function producerFinished(producer: ChildHandle): Promise<{ acked: number; failed: number }> {
  return new Promise((resolve, reject) => {
    producer.onMessage((message) => {
      if (message.type === 'finished') resolve({ acked: message.acked, failed: message.failed });
    });
    void producer.exited.then((code) => {
      if (code !== 0) reject(new Error(`producer exited with ${code} before finishing`));
    });
  });
}
