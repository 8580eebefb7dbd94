/**
 * A host of the partitions benchmark (bench/partitions.ts): one child process, a producer or a
 * worker, so that producers, workers and Redis never share one Node event loop. It boots once;
 * for each phase the orchestrator has it open a fresh Nest application (new connections, a new
 * node lease), then enqueue or claim, then close it. Started by partitions-hosts.ts.
 */
import './support/aliases';
import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { ProcessorExplorer, QueueService } from '@app/echomq/internal';
import { openProducerApp, openWorkerApp, type DrainHooks } from './partitions-app';
import {
  PROGRESS_EVERY_MS,
  type AppSettings,
  type FromHost,
  type HostRole,
  type ToHost,
  type WorkerReport,
} from './partitions-ipc';
import { anchorClock, wallNow } from './support/clock';
import { runInFlight } from './support/in-flight';
import { makePayload } from './support/payload';

class DrainRecorder implements DrainHooks {
  started = 0;
  completed = 0;
  firstStartAt: number | null = null;
  lastCompletedAt: number | null = null;

  onStart(): void {
    this.started += 1;
    this.firstStartAt ??= wallNow();
  }

  onComplete(): void {
    this.completed += 1;
    this.lastCompletedAt = wallNow();
  }

  report(): WorkerReport {
    const { started, completed, firstStartAt, lastCompletedAt } = this;
    return { started, completed, firstStartAt, lastCompletedAt };
  }
}

function send(message: FromHost): void {
  process.send?.(message);
}

function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/** The application this host has open for the current phase. */
class HostState {
  private app?: INestApplicationContext;
  private settings?: AppSettings;
  private recorder?: DrainRecorder;
  private ticker?: NodeJS.Timeout;

  constructor(private readonly role: HostRole) {}

  async open(settings: AppSettings): Promise<void> {
    if (this.app) throw new Error('an application is already open');
    anchorClock();
    this.settings = settings;
    if (this.role === 'producer') {
      this.app = await openProducerApp(settings);
      return;
    }
    const recorder = new DrainRecorder();
    this.recorder = recorder;
    this.app = await openWorkerApp(settings, recorder);
    this.ticker = setInterval(
      () => send({ type: 'progress', completed: recorder.completed }),
      PROGRESS_EVERY_MS,
    );
  }

  async enqueue(from: number, count: number, inFlight: number): Promise<void> {
    const { app, settings } = this.opened();
    const queues = app.get(QueueService);
    const firstAt = wallNow();
    await runInFlight(count, inFlight, (i) => queues.enqueue(settings.queue, makePayload(from + i)));
    send({ type: 'enqueued', report: { firstAt, lastAt: wallNow() } });
  }

  start(): void {
    const { app, settings } = this.opened();
    app.get(ProcessorExplorer).startQueue(settings.queue);
  }

  async close(): Promise<WorkerReport | null> {
    clearInterval(this.ticker);
    await this.app?.close();
    const report = this.recorder?.report() ?? null;
    this.app = undefined;
    this.recorder = undefined;
    return report;
  }

  private opened(): { app: INestApplicationContext; settings: AppSettings } {
    if (!this.app || !this.settings) throw new Error('no application is open');
    return { app: this.app, settings: this.settings };
  }
}

function isRole(value: string | undefined): value is HostRole {
  return value === 'producer' || value === 'worker';
}

async function main(): Promise<void> {
  const role = process.argv[2];
  if (!isRole(role) || !process.send) {
    throw new Error(
      'partitions-host runs as a child of bench/partitions.ts: partitions-host <producer|worker>',
    );
  }
  const state = new HostState(role);
  const handle = async (message: ToHost): Promise<void> => {
    switch (message.type) {
      case 'open':
        await state.open(message.settings);
        return send({ type: 'opened' });
      case 'enqueue':
        return state.enqueue(message.from, message.count, message.inFlight);
      case 'start':
        state.start();
        return send({ type: 'started' });
      case 'cpu':
        return send({ type: 'cpu', seconds: cpuSeconds() });
      case 'close':
        return send({ type: 'closed', report: await state.close() });
      case 'exit':
        await state.close();
        process.exit(0);
    }
  };
  process.on('message', (message: ToHost) => {
    handle(message).catch((error: Error) => send({ type: 'failed', message: error.stack ?? error.message }));
  });
  // The orchestrator going away ends the host too.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'booted' });
}

main().catch((error: Error) => {
  send({ type: 'failed', message: error.stack ?? error.message });
  process.exit(1);
});
