/**
 * A worker process of the battery: a Nest application context whose one processor records
 * each handler start in the ledger, and whose worker events record what Redis accepted.
 * Started (and killed) by support/processes.ts; not run by hand.
 */
import './aliases';
import 'reflect-metadata';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  EchoMqModule,
  OnWorkerEvent,
  Processor,
  type Job,
  type WorkerCompletedEvent,
  type WorkerStaleEvent,
} from '@app/echomq';
import { LedgerWriter } from './ledger';
import { readChildConfig, type WorkerChildConfig } from './child-config';

const config = readChildConfig<WorkerChildConfig>();
const ledger = new LedgerWriter(join(config.ledgerDir, `worker-${process.pid}.ledger`));

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });
}

@Processor(config.queue, {
  concurrency: config.concurrency,
  leaseMs: config.leaseMs,
  maxAttempts: config.maxAttempts,
  backoff: { type: 'fixed', delayMs: 0 },
})
class ChaosProcessor {
  async process(job: Job<{ ms?: number }>): Promise<number> {
    ledger.write('run', job.id, job.attempt);
    if (job.name === 'poison') process.kill(process.pid, 'SIGKILL');
    const ms = Number(job.data?.ms) || 0;
    if (ms > 0) await sleep(ms, job.signal);
    return job.attempt;
  }

  @OnWorkerEvent('completed')
  onCompleted(event: WorkerCompletedEvent): void {
    ledger.write('done', event.id, event.job.attempt);
  }

  @OnWorkerEvent('stale')
  onStale(event: WorkerStaleEvent): void {
    ledger.write('stale', event.id, event.attempt);
  }
}

@Module({
  imports: [
    EchoMqModule.forRoot({
      ...config.module,
      connection: config.connection,
      queues: {
        [config.queue]: {
          concurrency: config.concurrency,
          retainCompletedMs: config.retainCompletedMs ?? 3_600_000,
        },
      },
    }),
  ],
  providers: [ChaosProcessor],
})
class ChaosWorkerModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(ChaosWorkerModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks(['SIGTERM']);
  await app.init();
  process.send?.({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
