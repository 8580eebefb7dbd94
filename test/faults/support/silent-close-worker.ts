/**
 * A worker process for test/faults/silent-network.spec.ts, run as a child:
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register test/faults/support/silent-close-worker.ts
 * with REDIS_URL (the fault proxy's), ECHOMQ_QUEUE, ECHOMQ_NODE_ID, ECHOMQ_LEASE_MS,
 * ECHOMQ_COMMAND_TIMEOUT_MS, ECHOMQ_REPLAY_WINDOW_MS and ECHOMQ_SHUTDOWN_GRACE_MS in its environment.
 *
 * It runs everything a worker process runs (claim loop, heartbeat, reaper, an event reader
 * with a subscriber), tells the parent over IPC when it is ready and when a job starts (its
 * handler never returns and ignores its signal), and on {type: 'close'} closes the app. Then
 * it only cuts its IPC channel: it does not call process.exit, so it ends only if app.close()
 * left nothing behind that keeps Node's event loop alive.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EchoMqModule, Processor, QueueService, type Job } from '@app/echomq';

export type SilentWorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'started'; readonly id: string }
  | { readonly type: 'closed' }
  | { readonly type: 'close-failed'; readonly error: string };

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

function tell(message: SilentWorkerMessage): void {
  process.send?.(message);
}

const queue = env('ECHOMQ_QUEUE');

@Processor(queue, { concurrency: 2, leaseMs: Number(env('ECHOMQ_LEASE_MS')) })
class StuckProcessor {
  process(job: Job): Promise<never> {
    tell({ type: 'started', id: job.id });
    return new Promise<never>(() => undefined); // ignores its signal: the worst case for a shutdown
  }
}

@Module({
  imports: [
    EchoMqModule.forRoot({
      connection: { url: env('REDIS_URL') },
      nodeId: Number(env('ECHOMQ_NODE_ID')),
      reaper: { intervalMs: 100 },
      commandTimeoutMs: Number(env('ECHOMQ_COMMAND_TIMEOUT_MS')),
      replayWindowMs: Number(env('ECHOMQ_REPLAY_WINDOW_MS')),
      shutdownGraceMs: Number(env('ECHOMQ_SHUTDOWN_GRACE_MS')),
    }),
  ],
  providers: [StuckProcessor],
})
class SilentWorkerModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(SilentWorkerModule, { logger: false });
  // An event reader with a subscriber, as an app that listens to its queue has.
  await app.get(QueueService).subscribe(queue, () => undefined);
  process.on('message', (message: { type?: string }) => {
    if (message.type !== 'close') return;
    app.close().then(
      () => {
        tell({ type: 'closed' });
        process.disconnect();
      },
      (error: unknown) => {
        tell({ type: 'close-failed', error: String(error) });
        process.disconnect();
      },
    );
  });
  tell({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
