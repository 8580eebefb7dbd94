import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..');
const MAIN = join(ROOT, 'apps', 'worker', 'src', 'main.ts');

/** The worker host (apps/worker/src/main.ts) in a process of its own, under ts-node, as an operator runs it. */
export class WorkerHost {
  private output = '';

  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
  }

  /** `preload`: modules required before main (a test's fault planted in the library, see plant-loop-defect.ts). */
  static start(env: Record<string, string>, preload: readonly string[] = []): WorkerHost {
    const required = preload.flatMap((path) => ['-r', path]);
    const child = spawn(
      process.execPath,
      ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', ...required, MAIN],
      {
        cwd: ROOT,
        env: { ...process.env, EMQ_LOG_FORMAT: 'text', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    return new WorkerHost(child);
  }

  /** What it printed so far, for failure messages. */
  get log(): string {
    return this.output;
  }

  get exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Resolves how the process ended, once it has (on its own). */
  ended(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const { exitCode, signalCode } = this.child;
    if (this.exited) return Promise.resolve({ code: exitCode, signal: signalCode });
    return new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  /**
   * SIGTERM (the graceful drain), then waits for the exit; SIGKILL if it has not exited within
   * `ms`. Resolves how it ended: Nest re-raises the signal once the application has closed.
   */
  async stop(ms = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const { exitCode, signalCode } = this.child;
    if (this.exited) return { code: exitCode, signal: signalCode };
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      this.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), ms);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  }
}
