/**
 * Where EchoMQ's time goes in a drain: enqueue N jobs, drain them with one in-process
 * worker, and print Redis CPU per job, commands per job (by command) and jobs/s; and, before
 * the drain, where the waiting jobs' memory is (printMemorySplit).
 *
 *   npx ts-node -r tsconfig-paths/register --transpile-only bench/profile-drain.ts [jobs] [concurrency] [fill]
 *
 * fill: `bulk` (default: enqueueMany of ENQUEUE_MANY_MAX per call) or `single` (one job per call,
 * 100 calls in flight: the benchmark's memory figure, whose calls merge into fewer script calls).
 * Add --cpu-prof to the node options (NODE_OPTIONS=--cpu-prof) to profile the worker side.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { EchoMqModule, Processor, QueueService, type Job } from '@app/echomq';
import { ENQUEUE_MANY_MAX, queueKeys, type QueueKeys } from '@app/echomq/internal';
import { RedisServer } from '../test/support/redis-server';

const QUEUE = 'profile';
const total = Number(process.argv[2] ?? 20_000);
const concurrency = Number(process.argv[3] ?? 50);
const fill = process.argv[4] === 'single' ? 'single' : 'bulk';
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

async function memoryUsage(redis: Redis, key: string): Promise<number> {
  return Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
}

async function keysLike(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...page);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/**
 * Where the used_memory growth of `jobs` waiting jobs went, per job, by MEMORY USAGE: rows
 * (a sample of 100; each counts its key, object, value and main-dictionary entry), the
 * pending set, the event stream, the merged calls' reply records. The rest is what MEMORY
 * USAGE does not count: the main dictionary's bucket table, each entry's allocator rounding
 * (24 bytes asked for, 32 given) and the queue's own small keys.
 */
async function printMemorySplit(redis: Redis, keys: QueueKeys, jobs: number, grown: number): Promise<void> {
  const rows = (await keysLike(redis, `${keys.jobPrefix}*`)).slice(0, 100);
  let rowBytes = 0;
  for (const row of rows) rowBytes += await memoryUsage(redis, row);
  const row = rowBytes / Math.max(1, rows.length);
  const encoding = rows.length > 0 ? String(await redis.object('ENCODING', rows[0])) : '-';
  const pending = (await memoryUsage(redis, keys.pending)) / jobs;
  const events = (await memoryUsage(redis, keys.events)) / jobs;
  const replyKeys = await keysLike(redis, `${keys.base}reply:*`);
  let replies = 0;
  for (const key of replyKeys) replies += await memoryUsage(redis, key);
  replies /= jobs;
  const perJob = grown / jobs;
  const rest = perJob - row - pending - events - replies;
  const b = (n: number): string => n.toFixed(1);
  console.log(`memory per waiting job: ${perJob.toFixed(0)} bytes (used_memory delta / ${jobs})`);
  console.log(
    `  row ${b(row)} B (${encoding}), pending set ${b(pending)} B, event stream ${b(events)} B ` +
      `(${await redis.xlen(keys.events)} entries), reply records ${b(replies)} B (${replyKeys.length} keys), ` +
      `the rest ${b(rest)} B (the main dictionary's table, allocator rounding)`,
  );
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

  // One job on another queue first, so the scripts are in Redis's script cache (as in the
  // benchmark, whose earlier figures load them) and their text is not counted per job.
  await queues.enqueue(`${QUEUE}-warm`, payload);
  const before = await snapshot(redis);
  if (fill === 'bulk') {
    for (let i = 0; i < total; i += ENQUEUE_MANY_MAX) {
      await queues.enqueueMany(
        QUEUE,
        Array.from({ length: Math.min(ENQUEUE_MANY_MAX, total - i) }, () => ({ data: payload })),
      );
    }
  } else {
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next++ < total) await queues.enqueue(QUEUE, payload);
    };
    await Promise.all(Array.from({ length: 100 }, lane));
  }
  const filled = await snapshot(redis);
  await printMemorySplit(redis, queueKeys(QUEUE), total, filled.memory - before.memory);

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
