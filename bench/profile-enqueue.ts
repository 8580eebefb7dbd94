/**
 * Where the producer's time goes on enqueue: N single enqueues with 100 calls in flight, then
 * N jobs in enqueueMany batches (1,000 per call, or ENQUEUE_MANY_MAX if lower), each after an
 * untimed warm-up, on a Nest application context with EchoMqModule.forRoot and no processors.
 * Prints jobs/s, Node CPU µs per job (process.cpuUsage: everything this process did, ioredis
 * included), Redis CPU µs per job (INFO used_cpu_sys + used_cpu_user) and Redis commands per job.
 *
 *   npx ts-node -r tsconfig-paths/register --transpile-only bench/profile-enqueue.ts [jobs] [rounds]
 *   PROFILE=/tmp/enqueue npx ts-node ... bench/profile-enqueue.ts
 *
 * PROFILE=<path> writes a CPU profile of the last round's single and bulk phases
 * (<path>.single.cpuprofile, <path>.bulk.cpuprofile; open them in Chrome DevTools) and prints
 * the top self-time functions of each. Starts its own redis-server on a free loopback port;
 * the payloads are the benchmark's (~100 bytes of JSON, bench/support/payload.ts).
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { EchoMqModule, QueueService } from '@app/echomq';
import { ENQUEUE_MANY_MAX } from '@app/echomq/scripts/limits';
import { RedisServer } from '../test/support/redis-server';
import { inBatches, runInFlight } from './support/in-flight';
import { makePayloads, type JobData } from './support/payload';

const QUEUE = 'profile-enqueue';
const IN_FLIGHT = 100;
/** BATCH=<n> sends smaller batches (a checkout whose script still takes fewer than its ENQUEUE_MANY_MAX). */
const BATCH = Math.min(Number(process.env.BATCH ?? 1_000), ENQUEUE_MANY_MAX);
const total = Number(process.argv[2] ?? 20_000);
const rounds = Number(process.argv[3] ?? 3);
const warmUp = Number(process.env.WARMUP ?? 2_000);

interface RedisSnapshot {
  readonly cpu: number;
  readonly calls: Record<string, number>;
}

interface PhaseResult {
  readonly jobsPerSecond: number;
  readonly nodeCpuUs: number;
  readonly redisCpuUs: number;
  readonly commands: Record<string, number>;
}

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly children?: number[];
}

interface CpuProfile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

async function snapshot(redis: Redis): Promise<RedisSnapshot> {
  const info: Record<string, string> = {};
  for (const line of (await redis.info('all')).split('\r\n')) {
    const at = line.indexOf(':');
    if (at > 0) info[line.slice(0, at)] = line.slice(at + 1);
  }
  const calls: Record<string, number> = {};
  for (const [key, value] of Object.entries(info)) {
    if (key.startsWith('cmdstat_')) calls[key.slice(8)] = Number(/calls=(\d+)/.exec(value)?.[1] ?? 0);
  }
  return { cpu: Number(info.used_cpu_sys) + Number(info.used_cpu_user), calls };
}

/** Runs one timed phase of `jobs` jobs; `profile` names the file its CPU profile goes to. */
async function phase(
  redis: Redis,
  jobs: number,
  run: () => Promise<void>,
  profile?: string,
): Promise<PhaseResult> {
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
  }
  const before = await snapshot(redis);
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  await run();
  const seconds = (performance.now() - startedAt) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const after = await snapshot(redis);
  if (session) {
    const { profile: recorded } = await session.post('Profiler.stop');
    writeFileSync(profile!, JSON.stringify(recorded));
    printTopSelf(recorded as unknown as CpuProfile, profile!);
    session.disconnect();
  }
  const commands: Record<string, number> = {};
  for (const [name, calls] of Object.entries(after.calls)) {
    // INFO itself is the snapshot's own command.
    const rate = (calls - (before.calls[name] ?? 0)) / jobs;
    if (name !== 'info' && rate > 0.0005) commands[name] = rate;
  }
  return {
    jobsPerSecond: jobs / seconds,
    nodeCpuUs: (cpu.user + cpu.system) / jobs,
    redisCpuUs: ((after.cpu - before.cpu) * 1e6) / jobs,
    commands,
  };
}

/** The functions with the most self time in a profile, as DevTools' bottom-up view lists them. */
function printTopSelf(profile: CpuProfile, file: string, top = 25): void {
  const byNode = new Map<number, number>();
  profile.samples.forEach((node, index) =>
    byNode.set(node, (byNode.get(node) ?? 0) + (profile.timeDeltas[index] ?? 0)),
  );
  const byFunction = new Map<string, number>();
  let sum = 0;
  for (const node of profile.nodes) {
    const self = byNode.get(node.id) ?? 0;
    sum += self;
    const { functionName, url, lineNumber } = node.callFrame;
    const where = url === '' ? '' : ` ${url.replace(/^.*\/(node_modules|libs)\//, '$1/')}:${lineNumber + 1}`;
    const name = `${functionName || '(anonymous)'}${where}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + self);
  }
  console.log(`  top self time (${file}, ${(sum / 1000).toFixed(0)} ms sampled):`);
  for (const [name, self] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(`    ${((100 * self) / sum).toFixed(1).padStart(5)}%  ${name}`);
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function describe(label: string, results: readonly PhaseResult[]): void {
  const figure = (pick: (result: PhaseResult) => number, digits: number): string =>
    `${median(results.map(pick)).toFixed(digits)} (${results.map((r) => pick(r).toFixed(digits)).join(', ')})`;
  console.log(`${label}:`);
  console.log(`  jobs/s            ${figure((r) => r.jobsPerSecond, 0)}`);
  console.log(`  Node CPU µs/job   ${figure((r) => r.nodeCpuUs, 2)}`);
  console.log(`  Redis CPU µs/job  ${figure((r) => r.redisCpuUs, 2)}`);
  const commands = Object.entries(results[results.length - 1].commands)
    .sort((a, b) => b[1] - a[1])
    .map(([name, rate]) => `${name} ${rate.toFixed(3)}`);
  console.log(`  commands per job  ${commands.join(', ')} (last round)`);
}

async function main(): Promise<void> {
  const server = await RedisServer.start();
  const redis = new Redis(server.url);
  @Module({ imports: [EchoMqModule.forRoot({ connection: { url: server.url } })] })
  class ProducerModule {}
  const app = await NestFactory.createApplicationContext(ProducerModule, { logger: ['error'] });
  const queues = app.get(QueueService);
  const single = (queue: string, payloads: readonly JobData[]): Promise<void> =>
    runInFlight(payloads.length, IN_FLIGHT, (i) => queues.enqueue(queue, payloads[i]));
  const bulk = (queue: string, payloads: readonly JobData[]): Promise<void> =>
    inBatches(payloads, BATCH, (slice) =>
      queues.enqueueMany(
        queue,
        slice.map((data) => ({ data })),
      ),
    );
  const singles: PhaseResult[] = [];
  const bulks: PhaseResult[] = [];
  try {
    for (let round = 1; round <= rounds; round++) {
      const profile = round === rounds ? process.env.PROFILE : undefined;
      // A queue per phase and round, so every timed phase starts from empty sets (the sizes
      // each round sees are the same) without flushing what the module keeps in Redis.
      const singleQueue = `${QUEUE}-single-${round}`;
      await single(singleQueue, makePayloads(warmUp));
      const singlePayloads = makePayloads(total);
      singles.push(
        await phase(
          redis,
          total,
          () => single(singleQueue, singlePayloads),
          profile && `${profile}.single.cpuprofile`,
        ),
      );
      const bulkQueue = `${QUEUE}-bulk-${round}`;
      await bulk(bulkQueue, makePayloads(Math.max(warmUp, BATCH)));
      const bulkPayloads = makePayloads(total);
      bulks.push(
        await phase(
          redis,
          total,
          () => bulk(bulkQueue, bulkPayloads),
          profile && `${profile}.bulk.cpuprofile`,
        ),
      );
    }
  } finally {
    await app.close();
    redis.disconnect();
    await server.destroy();
  }
  console.log(`${total} jobs per phase, ${rounds} rounds (median, then each round), ${warmUp} warm-up jobs`);
  describe(`enqueue, 1 job per call, ${IN_FLIGHT} calls in flight`, singles);
  describe(`enqueueMany, ${BATCH} jobs per call, 1 call in flight`, bulks);
}

void main();
