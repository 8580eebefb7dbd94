/**
 * What durable writes (module option `durable`: WAIT for the replicas) cost an enqueue: the
 * same producer against a master with one replica on loopback, without and with
 * `durable: { replicas: 1 }`, in alternating rounds (plain, durable, plain, ...). Figures:
 * single enqueues with many in flight (throughput), one at a time (latency of one call), and
 * enqueueMany batches. Loopback replication is as fast as it gets: over a network, each durable
 * call also waits one round trip to the slowest replica it counts.
 *
 *   npx ts-node -r tsconfig-paths/register --transpile-only bench/durable-cost.ts [rounds] [jobs]
 */
import 'reflect-metadata';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EchoMqModule, QueueService, type DurableOptions } from '@app/echomq';
import { RedisServer } from '../test/support/redis-server';
import { NODE_ARGS, startReplica } from '../test/support/redis-sentinel';

const rounds = Number(process.argv[2] ?? 3);
const jobs = Number(process.argv[3] ?? 20_000);
const IN_FLIGHT = 100;
const ONE_AT_A_TIME = 1_000;
const BATCH = 100;
const DURABLE: DurableOptions = { replicas: 1, timeoutMs: 1_000 };

interface Figures {
  concurrentPerSecond: number;
  oneAtATimeP50Ms: number;
  oneAtATimeP99Ms: number;
  batchJobsPerSecond: number;
}

async function producer(url: string, durable: DurableOptions | undefined): Promise<INestApplicationContext> {
  @Module({
    imports: [
      EchoMqModule.forRoot({
        connection: { url },
        nodeId: 11,
        startProcessors: false,
        ...(durable ? { durable } : {}),
      }),
    ],
  })
  class ProducerModule {}
  const app = await NestFactory.createApplicationContext(ProducerModule, { logger: ['error'] });
  await app.init();
  return app;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

async function measure(queues: QueueService, queue: string): Promise<Figures> {
  await queues.register(queue);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < jobs) {
        next += 1;
        await queues.enqueue(queue, { n: next });
      }
    }),
  );
  const concurrentPerSecond = jobs / ((performance.now() - started) / 1000);

  const latencies: number[] = [];
  for (let i = 0; i < ONE_AT_A_TIME; i++) {
    const sent = performance.now();
    await queues.enqueue(queue, { i });
    latencies.push(performance.now() - sent);
  }
  latencies.sort((a, b) => a - b);

  const batchStarted = performance.now();
  for (let done = 0; done < jobs; done += BATCH) {
    await queues.enqueueMany(
      queue,
      Array.from({ length: BATCH }, (_, i) => ({ data: { i: done + i } })),
    );
  }
  const batchJobsPerSecond = jobs / ((performance.now() - batchStarted) / 1000);
  return {
    concurrentPerSecond,
    oneAtATimeP50Ms: percentile(latencies, 0.5),
    oneAtATimeP99Ms: percentile(latencies, 0.99),
    batchJobsPerSecond,
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const master = await RedisServer.start({ args: NODE_ARGS });
  const replica = await startReplica(master.port);
  const results: Record<'plain' | 'durable', Figures[]> = { plain: [], durable: [] };
  try {
    console.log(
      `${rounds} rounds; ${jobs} enqueues with ${IN_FLIGHT} in flight, ${ONE_AT_A_TIME} one at a time, ` +
        `${jobs} in enqueueMany batches of ${BATCH}; one replica on loopback; durable ${JSON.stringify(DURABLE)}`,
    );
    for (let round = 1; round <= rounds; round++) {
      for (const mode of ['plain', 'durable'] as const) {
        const app = await producer(master.url, mode === 'durable' ? DURABLE : undefined);
        try {
          const figures = await measure(app.get(QueueService), `durable-cost-${mode}-${round}`);
          results[mode].push(figures);
          console.error(`round ${round} ${mode}: ${JSON.stringify(figures)}`);
        } finally {
          await app.close();
        }
      }
    }
    const row = (label: string, key: keyof Figures, digits: number): void => {
      const plain = median(results.plain.map((figures) => figures[key]));
      const durable = median(results.durable.map((figures) => figures[key]));
      console.log(
        `${label.padEnd(36)} plain ${plain.toFixed(digits).padStart(9)}   durable ${durable
          .toFixed(digits)
          .padStart(9)}   durable/plain ${(durable / plain).toFixed(2)}`,
      );
    };
    row(`enqueue/s, ${IN_FLIGHT} in flight`, 'concurrentPerSecond', 0);
    row('enqueue one at a time, p50 ms', 'oneAtATimeP50Ms', 3);
    row('enqueue one at a time, p99 ms', 'oneAtATimeP99Ms', 3);
    row(`enqueueMany (${BATCH} per call) jobs/s`, 'batchJobsPerSecond', 0);
  } finally {
    await replica.destroy();
    await master.destroy();
  }
}

void main();
