import { spawn, type ChildProcess } from 'node:child_process';
import { ROOT } from './build-apps';

/** Output kept per process for the failure message: the tail is what explains a crash. */
const OUTPUT_KEPT = 20_000;

/**
 * One of the built apps running as a real process (`node dist/apps/<app>/main.js`), with only
 * the environment the test gives it (and PATH), its output kept for when something fails.
 */
export class AppProcess {
  private output = '';
  private readonly exited: Promise<number | null>;
  private readonly watchers = new Set<() => void>();

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
      for (const watcher of this.watchers) watcher();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
  }

  static start(name: string, main: string, env: Record<string, string>): AppProcess {
    const child = spawn(process.execPath, [main], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new AppProcess(name, child);
  }

  /** Resolves once the process has written `text`; rejects if it exits first or after timeoutMs. */
  async waitForOutput(text: string, timeoutMs = 30_000): Promise<void> {
    if (this.output.includes(text)) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`${this.name} did not write "${text}" within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const check = (): void => {
        if (this.output.includes(text)) finish();
      };
      const finish = (error?: Error): void => {
        clearTimeout(timer);
        this.watchers.delete(check);
        if (error) reject(new Error(`${error.message}\n--- ${this.name} output ---\n${this.output}`));
        else resolve();
      };
      this.watchers.add(check);
      void this.exited.then((code) => finish(new Error(`${this.name} exited (code ${code})`)));
    });
  }

  /** SIGTERM (the apps shut down gracefully on it), then SIGKILL if it takes longer than graceMs. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
