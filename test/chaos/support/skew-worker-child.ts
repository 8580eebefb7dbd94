/**
 * A worker process of the clock-skew scenario, usually run with its wall clock off by minutes
 * (libfaketime). Like the shared worker child it records each handler start and what Redis
 * accepted; its handlers add what the scenario checks against server time:
 *   'work'       sleeps data.ms (some longer than the lease, so heartbeats must hold it)
 *   'fail-once'  throws on its first attempt, completes on the next (its backoff is its own)
 *   anything else (a schedule's occurrences) completes at once.
 * Started by the clock-skew scenario; not run by hand.
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
})
class SkewProcessor {
  async process(job: Job<{ ms?: number }>): Promise<number> {
    ledger.write('run', job.id, job.attempt);
    if (job.name === 'fail-once' && job.attempt === 1) throw new Error('fails on its first attempt');
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
      // Completed rows are kept, so the scenario can read a schedule occurrence's name afterwards.
      queues: { [config.queue]: { concurrency: config.concurrency, retainCompletedMs: 3_600_000 } },
    }),
  ],
  providers: [SkewProcessor],
})
class SkewWorkerModule {}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(SkewWorkerModule, { logger: ['error', 'warn'] });
  app.enableShutdownHooks(['SIGTERM']);
  await app.init();
  process.send?.({ type: 'ready' });
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
