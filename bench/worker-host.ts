/**
 * A worker host: one child process that runs one system's worker at a time for
 * the orchestrator (bench/run.ts). It boots once; for each run the orchestrator
 * sends `start` after the prefill (the host then creates a fresh worker with its
 * own connections, or a fresh Nest application context for EchoMQ), and `stop`
 * after the last completion, which closes the worker and returns the host's
 * timestamps and counts. Started by support/worker-pool.ts; not run by hand.
 */
import './support/aliases';
import 'reflect-metadata';
import { loadSystem, isSystemId } from './systems';
import type { RunningWorker, WorkerHooks } from './systems/types';
import { anchorClock, wallNow } from './support/clock';
import { PROGRESS_EVERY_MS, type FromHost, type HostReport, type ToHost } from './support/ipc';
import type { JobData } from './support/payload';

class RunRecorder implements WorkerHooks {
  started = 0;
  completed = 0;
  firstStartAt: number | null = null;
  lastCompletedAt: number | null = null;
  readonly startLatenciesMs: number[] = [];

  onStart(data: JobData): void {
    const now = wallNow();
    this.started += 1;
    this.firstStartAt ??= now;
    if (data.t > 0 && data.w !== 1) this.startLatenciesMs.push(now - data.t);
  }

  onComplete(): void {
    this.completed += 1;
    this.lastCompletedAt = wallNow();
  }

  report(): HostReport {
    return {
      started: this.started,
      completed: this.completed,
      firstStartAt: this.firstStartAt,
      lastCompletedAt: this.lastCompletedAt,
      startLatenciesMs: this.startLatenciesMs,
    };
  }
}

function send(message: FromHost): void {
  process.send?.(message);
}

async function main(): Promise<void> {
  const id = process.argv[2];
  if (!isSystemId(id) || !process.send) {
    throw new Error(
      'worker-host.ts runs as a child of bench/run.ts: worker-host.ts <echomq|bullmq|beequeue>',
    );
  }
  const system = await loadSystem(id);
  let worker: RunningWorker | undefined;
  let recorder: RunRecorder | undefined;
  let ticker: NodeJS.Timeout | undefined;

  const handle = async (message: ToHost): Promise<void> => {
    switch (message.type) {
      case 'start': {
        if (worker) throw new Error('a worker is already running');
        anchorClock();
        const runRecorder = new RunRecorder();
        recorder = runRecorder;
        worker = await system.startWorker(
          message.redisUrl,
          { concurrency: message.concurrency, events: message.events },
          runRecorder,
        );
        ticker = setInterval(
          () => send({ type: 'progress', completed: runRecorder.completed }),
          PROGRESS_EVERY_MS,
        );
        send({ type: 'started' });
        return;
      }
      case 'stop': {
        clearInterval(ticker);
        await worker?.close();
        worker = undefined;
        send({ type: 'stopped', report: recorder?.report() ?? new RunRecorder().report() });
        recorder = undefined;
        return;
      }
      case 'exit':
        clearInterval(ticker);
        await worker?.close();
        process.exit(0);
    }
  };

  process.on('message', (message: ToHost) => {
    handle(message).catch((error: Error) => send({ type: 'failed', message: error.stack ?? error.message }));
  });
  // The orchestrator going away ends the host too.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'booted', system: id });
}

main().catch((error: Error) => {
  send({ type: 'failed', message: error.stack ?? error.message });
  process.exit(1);
});
