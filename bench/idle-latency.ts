/**
 * Idle enqueue -> start latency of EchoMQ: one worker (concurrency 10) blocked on
 * an empty queue; the producer enqueues one job at a time, waits for it to start,
 * lets the worker go idle again, and records enqueue-call -> handler-start.
 *
 *   npx ts-node -r tsconfig-paths/register --transpile-only bench/idle-latency.ts [jobs]
 *
 * Starts its own throwaway redis-server on a free loopback port.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EchoMqModule, Processor, QueueService, type Job } from '@app/echomq';
import { RedisServer } from '../test/support/redis-server';

const QUEUE = 'idle-latency';
let onStart: ((at: number) => void) | undefined;

@Processor(QUEUE, { concurrency: 10 })
class StartRecorder {
  process(_job: Job) {
    onStart?.(performance.now());
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const jobs = Number(process.argv[2] ?? 1000);
  const redis = await RedisServer.start();
  @Module({
    imports: [EchoMqModule.forRoot({ connection: { url: redis.url }, nodeId: 1 })],
    providers: [StartRecorder],
  })
  class BenchModule {}
  const app = await NestFactory.createApplicationContext(BenchModule, { logger: ['error'] });
  await app.init();
  const queues = app.get(QueueService);
  const samples: number[] = [];
  try {
    for (let i = 0; i < jobs + 20; i++) {
      const started = new Promise<number>((resolve) => (onStart = resolve));
      const sentAt = performance.now();
      await queues.enqueue(QUEUE, { i });
      const startedAt = await started;
      if (i >= 20) samples.push(startedAt - sentAt); // the first 20 warm up scripts and connections
      await new Promise((resolve) => setTimeout(resolve, 3)); // let the loop block on the wake list again
    }
  } finally {
    await app.close();
    await redis.destroy();
  }
  samples.sort((a, b) => a - b);
  const fmt = (ms: number): string => ms.toFixed(2);
  console.log(
    `idle enqueue->start over ${samples.length} jobs: p50 ${fmt(percentile(samples, 50))} ms, ` +
      `p95 ${fmt(percentile(samples, 95))} ms, p99 ${fmt(percentile(samples, 99))} ms, max ${fmt(samples[samples.length - 1])} ms`,
  );
}

void main();
