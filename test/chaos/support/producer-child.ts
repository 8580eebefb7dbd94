/**
 * A producer process of the battery: enqueues `count` jobs, each under an idempotency key of
 * its own, and appends an ack line for every id an enqueue returned. A failed enqueue is
 * recorded (its error code) and tried again with the same key until it is acknowledged, so a
 * producer ends having had every job acknowledged exactly once, whatever Redis did meanwhile.
 * Started by support/processes.ts; not run by hand.
 */
import './aliases';
import 'reflect-metadata';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EchoMqModule, QueueService } from '@app/echomq';
import { LedgerWriter } from './ledger';
import { readChildConfig, type ChildMessage, type ProducerChildConfig } from './child-config';

const config = readChildConfig<ProducerChildConfig>();
const ledger = new LedgerWriter(join(config.ledgerDir, `producer-${process.pid}.ledger`));

@Module({
  imports: [
    EchoMqModule.forRoot({ ...config.module, connection: config.connection, startProcessors: false }),
  ],
})
class ChaosProducerModule {}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && code !== '') return code;
  return error instanceof Error ? error.name : 'UNKNOWN';
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(ChaosProducerModule, { logger: ['error', 'warn'] });
  await app.init();
  const queues = app.get(QueueService);
  const send = (message: ChildMessage): void => void process.send?.(message);
  send({ type: 'ready' });

  let next = 0;
  let acked = 0;
  let failed = 0;
  const startedAt = Date.now();
  const progress = setInterval(() => send({ type: 'progress', acked, failed }), 500);

  const enqueueOne = async (seq: number): Promise<void> => {
    for (;;) {
      try {
        const id = await queues.enqueue(config.queue, config.job.data, {
          name: config.job.name,
          idempotencyKey: `${config.idempotencyPrefix}-${seq}`,
        });
        ledger.write('ack', id, seq);
        acked += 1;
        return;
      } catch (error) {
        failed += 1;
        ledger.write('fail', '-', errorCode(error));
        await delay(config.retryDelayMs);
      }
    }
  };

  const lane = async (): Promise<void> => {
    while (next < config.count) {
      const seq = next++;
      if (config.perSecond > 0) {
        const due = startedAt + (seq * 1_000) / config.perSecond;
        if (due > Date.now()) await delay(due - Date.now());
      }
      await enqueueOne(seq);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, config.inFlight) }, lane));
  clearInterval(progress);
  send({ type: 'finished', acked, failed });
  await app.close();
  ledger.close();
  process.disconnect?.();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
