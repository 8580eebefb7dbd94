/**
 * The memory-pressure scenario's worker process: the battery's worker (support/worker-child.ts:
 * a 'run' line at handler start, 'done' on the completed event, 'stale' on stale), except that
 * completed rows are deleted, not kept for an hour. Processing has to free room on a full Redis,
 * and a kept row (its payload and result) would hold on to most of what the job took. Its
 * processes are never SIGKILLed, so every completion has its ledger line and no retained row is
 * needed to tell a completion whose line died with its worker.
 * Started by the memory-pressure scenario; not run by hand.
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

@Processor(config.queue, {
  concurrency: config.concurrency,
  leaseMs: config.leaseMs,
  maxAttempts: config.maxAttempts,
  backoff: { type: 'fixed', delayMs: 0 },
  retainCompletedMs: 0,
})
class MemoryPressureProcessor {
  async process(job: Job<{ ms?: number }>): Promise<void> {
    ledger.write('run', job.id, job.attempt);
    const ms = Number(job.data?.ms) || 0;
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
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
  imports: [EchoMqModule.forRoot({ ...config.module, connection: config.connection })],
  providers: [MemoryPressureProcessor],
})
class MemoryPressureWorkerModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(MemoryPressureWorkerModule, {
    logger: ['error', 'warn', 'log'],
  });
  app.enableShutdownHooks(['SIGTERM']);
  await app.init();
  process.send?.({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
