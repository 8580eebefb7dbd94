import type { ChildHandle } from './processes';

/** Consecutive failed boots of one worker after which the supervisor gives up on it. */
const BOOT_FAILURES_MAX = 5;

/**
 * Keeps worker processes up, as an orchestrator (systemd, Kubernetes) would: each one that
 * exits is started again, until stop(). Counts the exits, so a scenario can compare them with
 * the deaths it caused. A worker can die again before it reports ready (it claimed a job that
 * kills it); that boot counts as an exit too and is retried.
 */
export class Supervisor {
  /** Exits of the watched workers while supervised, with the pid that exited. */
  readonly exits: number[] = [];
  /** A sentence per worker the supervisor gave up on, empty while all are kept up. */
  readonly givenUp: string[] = [];
  private stopped = false;
  private loops: Promise<void>[] = [];

  constructor(private readonly workers: readonly ChildHandle[]) {}

  /** Starts every worker and watches it; resolves when all are ready the first time. */
  async start(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.start()));
    this.loops = this.workers.map((worker) => this.watch(worker));
  }

  /** Stops restarting, ends every worker with `signal` and waits for the watchers to finish. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    this.stopped = true;
    await Promise.all(this.workers.map((worker) => worker.kill(signal)));
    await Promise.all(this.loops);
  }

  private async watch(worker: ChildHandle): Promise<void> {
    let failures = 0;
    for (;;) {
      const pid = worker.pid;
      await worker.exited;
      if (this.stopped) return;
      if (pid !== undefined) this.exits.push(pid);
      try {
        await worker.start();
        failures = 0;
      } catch (error) {
        failures += 1;
        if (failures >= BOOT_FAILURES_MAX) {
          this.givenUp.push(`a worker failed to boot ${failures} times: ${(error as Error).message}`);
          return;
        }
      }
    }
  }
}
