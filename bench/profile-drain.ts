/**
 * Where EchoMQ's time goes in a drain: enqueue N jobs, drain them with one in-process
 * worker, and print Redis CPU per job, commands per job (by command) and jobs/s.
 *
 *   npx ts-node -r tsconfig-paths/register --transpile-only bench/profile-drain.ts [jobs] [concurrency]
 *
 * Add --cpu-prof to the node options (NODE_OPTIONS=--cpu-prof) to profile the worker side.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { EchoMqModule, Processor, QueueService, type Job } from '@app/echomq';
import { queueKeys } from '@app/echomq/internal';
import { RedisServer } from '../test/support/redis-server';

const QUEUE = 'profile';
const total = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 50);
let done = 0;
let finish: () => void = () => undefined;
const finished = new Promise<void>((resolve) => (finish = resolve));

@Processor(QUEUE, { concurrency })
class Noop {
  async process(_job: Job) {
    if (++done === total) finish();
  }
}

function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0) out[line.slice(0, at)] = line.slice(at + 1);
  }
  return out;
}

async function snapshot(
  redis: Redis,
): Promise<{ cpu: number; calls: Record<string, number>; memory: number }> {
  const info = parseInfo(await redis.info('all'));
  const calls: Record<string, number> = {};
  for (const [key, value] of Object.entries(info)) {
    if (key.startsWith('cmdstat_')) calls[key.slice(8)] = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
  }
  return {
    cpu: Number(info.used_cpu_sys) + Number(info.used_cpu_user),
    calls,
    memory: Number(info.used_memory),
  };
}

async function main(): Promise<void> {
  const server = await RedisServer.start();
  const redis = new Redis(server.url);
  @Module({ imports: [EchoMqModule.forRoot({ connection: { url: server.url }, nodeId: 2 })] })
  class ProducerModule {}
  const producer = await NestFactory.createApplicationContext(ProducerModule, { logger: ['error'] });
  const queues = producer.get(QueueService);
  const payload = {
    user: 'someone@example.com',
    action: 'send-welcome-email',
    attempt: 0,
    padding: 'x'.repeat(30),
  };

  const before = await snapshot(redis);
  for (let i = 0; i < total; i += 500) {
    await queues.enqueueMany(
      QUEUE,
      Array.from({ length: Math.min(500, total - i) }, () => ({ data: payload })),
    );
  }
  const filled = await snapshot(redis);
  console.log(`memory per waiting job: ${((filled.memory - before.memory) / total).toFixed(0)} bytes`);
  const [first] = await queues.browse(QUEUE, 'pending', { limit: 1 });
  const usage = async (key: string): Promise<number> =>
    Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  const keys = queueKeys(QUEUE);
  console.log(
    `  one row ${await usage(keys.job(first))} B (${String(await redis.object('ENCODING', keys.job(first)))}),` +
      ` pending set ${((await usage(keys.pending)) / total).toFixed(0)} B/job,` +
      ` event stream ${((await usage(keys.events)) / total).toFixed(0)} B/job`,
  );

  @Module({
    imports: [EchoMqModule.forRoot({ connection: { url: server.url }, nodeId: 3 })],
    providers: [Noop],
  })
  class WorkerModule {}
  // PROFILE=<file> writes a CPU profile of the drain alone (open it in Chrome DevTools).
  const session = process.env.PROFILE ? new Session() : undefined;
  const worker = await NestFactory.createApplicationContext(WorkerModule, { logger: ['error'] });
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.start');
  }
  const start = performance.now();
  const cpuBefore = process.cpuUsage();
  await worker.init();
  await finished;
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(process.env.PROFILE!, JSON.stringify(profile));
  }
  const seconds = (performance.now() - start) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  console.log(`Node CPU per processed job (drain only): ${((cpu.user + cpu.system) / total).toFixed(1)} µs`);
  const after = await snapshot(redis);
  console.log(
    `drained ${total} at concurrency ${concurrency}: ${(total / seconds).toFixed(0)} jobs/s (drain only)`,
  );
  console.log(`Redis CPU per processed job: ${(((after.cpu - filled.cpu) * 1e6) / total).toFixed(1)} µs`);
  const perJob = Object.entries(after.calls)
    .map(([name, calls]) => [name, (calls - (filled.calls[name] ?? 0)) / total] as const)
    .filter(([, rate]) => rate > 0.001)
    .sort((a, b) => b[1] - a[1]);
  console.log(`commands per job in the drain: ${perJob.map(([n, r]) => `${n} ${r.toFixed(3)}`).join(', ')}`);
  await worker.close();
  await producer.close();
  redis.disconnect();
  await server.destroy();
}

void main();
