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
import { cpuMicrosNow } from './support/cpu';
import { PROGRESS_EVERY_MS, type FromHost, type HostReport, type ToHost } from './support/ipc';
import type { JobData } from './support/payload';

class RunRecorder implements WorkerHooks {
  started = 0;
  completed = 0;
  firstStartAt: number | null = null;
  lastCompletedAt: number | null = null;
  readonly startLatenciesMs: number[] = [];
  /** Node CPU (µs) when the run was asked for, at the first handler start, after the last completion. */
  private readonly cpuAtStartMessage = cpuMicrosNow();
  private cpuAtFirstStart: number | null = null;
  private cpuAtLastCompletion: number | null = null;
  private sampleQueued = false;
  // One CPU sample per event-loop turn with completions, not one per completion: a sample is a
  // getrusage call (~0.4 µs), which would weigh on the per-job figure at high concurrency.
  private readonly sampleCpu = (): void => {
    this.sampleQueued = false;
    this.cpuAtLastCompletion = cpuMicrosNow();
  };

  onStart(data: JobData): void {
    const now = wallNow();
    this.started += 1;
    if (this.firstStartAt === null) {
      this.firstStartAt = now;
      this.cpuAtFirstStart = cpuMicrosNow();
    }
    if (data.t > 0 && data.w !== 1) this.startLatenciesMs.push(now - data.t);
  }

  onComplete(): void {
    this.completed += 1;
    this.lastCompletedAt = wallNow();
    if (!this.sampleQueued) {
      this.sampleQueued = true;
      setImmediate(this.sampleCpu);
    }
  }

  report(): HostReport {
    const first = this.cpuAtFirstStart;
    const last = this.cpuAtLastCompletion;
    return {
      started: this.started,
      completed: this.completed,
      firstStartAt: this.firstStartAt,
      lastCompletedAt: this.lastCompletedAt,
      startLatenciesMs: this.startLatenciesMs,
      cpuMicros: first !== null && last !== null ? last - first : null,
      startupCpuMicros: first !== null ? first - this.cpuAtStartMessage : null,
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
          { queues: message.queues, concurrency: message.concurrency, events: message.events },
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
