/**
 * A producer process of the clock-skew scenario, usually run with its wall clock off by minutes
 * (libfaketime). It does what its SkewProducerConfig lists, writes an ack line for every id an
 * enqueue returned (retrying a failed enqueue with the same idempotency key, as the shared
 * producer does), and at the end a report of which ids are which kind of job.
 * Started by the clock-skew scenario; not run by hand.
 */
import './aliases';
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EchoMqModule, QueueService, type EnqueueOptions } from '@app/echomq';
import { LedgerWriter } from './ledger';
import { readChildConfig, type ChildMessage } from './child-config';
import { skewReportPath, type SkewProducerConfig, type SkewProducerReport } from './skew-config';

const config = readChildConfig<SkewProducerConfig>();
const ledger = new LedgerWriter(join(config.ledgerDir, `producer-${process.pid}.ledger`));

@Module({
  imports: [
    EchoMqModule.forRoot({ ...config.module, connection: config.connection, startProcessors: false }),
  ],
})
class SkewProducerModule {}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && code !== '' ? code : 'UNKNOWN';
}

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(SkewProducerModule, { logger: ['error', 'warn'] });
  await app.init();
  const queues = app.get(QueueService);
  const send = (message: ChildMessage): void => void process.send?.(message);
  send({ type: 'ready' });
  await delay(config.warmupMs);

  let seq = 0;
  let acked = 0;
  let failed = 0;
  const enqueue = async (data: unknown, options: EnqueueOptions): Promise<string> => {
    const key = `${config.idempotencyPrefix}-${seq}`;
    const mine = seq++;
    for (;;) {
      try {
        const id = await queues.enqueue(config.queue, data, { ...options, idempotencyKey: key });
        ledger.write('ack', id, mine);
        acked += 1;
        return id;
      } catch (error) {
        failed += 1;
        ledger.write('fail', '-', errorCode(error));
        await delay(config.retryDelayMs);
      }
    }
  };

  let schedule: SkewProducerReport['schedule'];
  if (config.schedule) {
    const { key, everyMs } = config.schedule;
    const result = await queues.upsertSchedule(
      config.queue,
      key,
      { everyMs },
      { name: 'tick', data: { key } },
    );
    schedule = { key, upsertedAt: Date.now(), nextRunAt: result.nextRunAt.getTime() };
  }
  // The FIFO sample: one enqueue at a time, paced on the monotonic clock.
  const fifo: string[] = [];
  const startedAt = performance.now();
  for (let i = 0; i < config.count; i++) {
    const due = startedAt + (i * 1_000) / Math.max(1, config.perSecond);
    if (due > performance.now()) await delay(due - performance.now());
    fifo.push(await enqueue(config.job.data, { name: config.job.name }));
  }
  const many = async (count: number, make: () => Promise<string>): Promise<string[]> => {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(await make());
    return ids;
  };
  const long = await many(config.long.count, () => enqueue({ ms: config.long.ms }, { name: 'work' }));
  const failOnce = await many(config.failOnce.count, () =>
    enqueue({}, { name: 'fail-once', backoff: { type: 'fixed', delayMs: config.failOnce.backoffMs } }),
  );
  const delayed = await many(config.delayed.count, () =>
    enqueue({ ms: 1 }, { name: 'work', delayMs: config.delayed.delayMs }),
  );

  const report: SkewProducerReport = { pid: process.pid, fifo, long, failOnce, delayed, schedule };
  writeFileSync(skewReportPath(config.ledgerDir, process.pid), JSON.stringify(report));
  send({ type: 'finished', acked, failed });
  await app.close();
  ledger.close();
  process.disconnect?.();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
