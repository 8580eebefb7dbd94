/**
 * A fresh worker's first jobs against its warm rate: prefills cold + warm jobs (~100-byte JSON),
 * forks a fresh worker process (a Nest application context with EchoMqModule and one @Processor,
 * no-op handler, nothing drained before), and reports its first `cold` jobs and its next `warm`
 * jobs, in the same process: jobs/s, the worker's Node CPU (and GC) per job, with the CPU of each
 * 2,000 jobs to show the warm-up, Redis CPU per job, and per command calls and µs per job and µs
 * per call (INFO commandstats: commands run inside scripts are counted too, and EVALSHA's time
 * includes theirs).
 *
 *   npx ts-node -r tsconfig-paths/register --transpile-only bench/profile-cold.ts [cold] [warm] [concurrency]
 *   PROFILE=/tmp/w npx ts-node ... bench/profile-cold.ts   (writes /tmp/w.cold.cpuprofile, /tmp/w.warm.cpuprofile)
 *   PROFILE=/tmp/w ALLOCS=1 npx ts-node ... bench/profile-cold.ts   (what each phase allocates: .heapprofile)
 *   WORKER_FLAGS='--trace-opt' npx ts-node ... bench/profile-cold.ts   (node flags for the worker alone)
 *
 * Defaults: 20,000 cold, 20,000 warm, concurrency 50. A phase starts at the first handler start
 * (the next at the end of the last) and ends at the completion, as the worker's 'completed' event
 * reports it, of its last job. With PROFILE the worker also prints each phase's top functions.
 * Under ts-node a module the worker requires late is compiled inside the timed phase: for figures
 * without that, run it compiled (tsc into a folder, then `TS_NODE_BASEURL=<folder> node -r
 * tsconfig-paths/register <folder>/bench/profile-cold.js`).
 */
import 'reflect-metadata';
import { fork } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { basename } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import { Module, type INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import {
  EchoMqModule,
  Processor,
  ProcessorExplorer,
  QueueService,
  queueKeys,
  type Job,
} from '@app/echomq/internal';
import { RedisServer } from '../test/support/redis-server';

const QUEUE = 'cold';
const PREFILL_BATCH = 500;
const STEP = 2_000;

/** What the worker reports at the end of a phase. */
interface Mark {
  readonly phase: 'cold' | 'warm';
  readonly ms: number;
  readonly cpuUs: number;
  readonly gcMs: number;
  /** Node CPU µs per job of each STEP jobs of the phase. */
  readonly steps: number[];
}

/** Redis's CPU seconds, and per command [calls, usec] (per error reply, e.g. 'NOSCRIPT reply', [count, 0]). */
interface Snapshot {
  readonly cpu: number;
  readonly stats: Map<string, [number, number]>;
}

async function snapshot(redis: Redis): Promise<Snapshot> {
  const stats = new Map<string, [number, number]>();
  let cpu = 0;
  for (const line of (await redis.info('all')).split('\r\n')) {
    const stat = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (stat) stats.set(stat[1], [Number(stat[2]), Number(stat[3])]);
    const error = /^errorstat_([^:]+):count=(\d+)/.exec(line);
    if (error) stats.set(`${error[1]} reply`, [Number(error[2]), 0]);
    const used = /^used_cpu_(?:sys|user):([\d.]+)$/.exec(line);
    if (used) cpu += Number(used[1]);
  }
  return { cpu, stats };
}

function describePhase(name: string, jobs: number, mark: Mark, from: Snapshot, to: Snapshot): void {
  const perJob = (n: number): string => (n / jobs).toFixed(2);
  console.log(
    `${name}: ${jobs} jobs in ${mark.ms.toFixed(0)} ms = ${((jobs * 1000) / mark.ms).toFixed(0)} jobs/s;` +
      ` Node CPU ${perJob(mark.cpuUs)} µs/job (GC ${perJob(mark.gcMs * 1000)} µs/job);` +
      ` Redis CPU ${perJob((to.cpu - from.cpu) * 1e6)} µs/job`,
  );
  console.log(`  Node CPU µs/job per ${STEP} jobs: ${mark.steps.map((us) => us.toFixed(0)).join(' ')}`);
  const rows = [...to.stats].map(([command, [calls, usec]]) => {
    const [calls0, usec0] = from.stats.get(command) ?? [0, 0];
    return { command, calls: calls - calls0, usec: usec - usec0 };
  });
  for (const { command, calls, usec } of rows.sort((a, b) => b.usec - a.usec)) {
    if (command.endsWith(' reply') && calls > 0) console.log(`  ${command.padEnd(16)} ${calls} in the phase`);
    if (command === 'info' || command.endsWith(' reply') || usec / jobs < 0.005) continue;
    console.log(
      `  ${command.padEnd(16)} ${perJob(calls).padStart(7)} calls/job ${perJob(usec).padStart(7)} µs/job` +
        ` ${(usec / calls).toFixed(2).padStart(8)} µs/call`,
    );
  }
}

async function parent(): Promise<void> {
  const [cold, warm, concurrency] = [20_000, 20_000, 50].map((fallback, i) =>
    Number(process.argv[2 + i] ?? fallback),
  );
  const server = await RedisServer.start();
  const admin = new Redis(server.url);
  @Module({ imports: [EchoMqModule.forRoot({ connection: { url: server.url }, nodeId: 2 })] })
  class ProducerModule {}
  const producer = await NestFactory.createApplicationContext(ProducerModule, { logger: ['error'] });
  const total = cold + warm;
  for (let i = 0; i < total; i += PREFILL_BATCH) {
    const batch = Array.from({ length: Math.min(PREFILL_BATCH, total - i) }, (_, k) => ({
      data: { i: i + k, t: Date.now(), s: 'x'.repeat(64) },
    }));
    await producer.get(QueueService).enqueueMany(QUEUE, batch);
  }
  await producer.close();

  const snapshots: Snapshot[] = [await snapshot(admin)];
  const marks: Mark[] = [];
  const child = fork(__filename, ['--worker', server.url, String(concurrency), String(cold), String(total)], {
    execArgv: [
      ...(__filename.endsWith('.ts')
        ? ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register']
        : process.execArgv),
      ...(process.env.WORKER_FLAGS?.split(' ').filter(Boolean) ?? []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const active = queueKeys(QUEUE).active;
  await new Promise<void>((resolve, reject) => {
    child.on('message', (mark: Mark) => {
      void Promise.all([snapshot(admin), admin.object('ENCODING', active), admin.zcard(active)])
        .then(([snap, encoding, size]) => {
          snapshots.push(snap);
          marks.push(mark);
          console.log(`(at the end of ${mark.phase}: active holds ${size}, encoded ${String(encoding)})`);
          if (mark.phase === 'warm') resolve();
        })
        .catch(reject);
    });
    child.on('exit', (code) => reject(new Error(`the worker exited (${code})`)));
  });
  describePhase(`cold (its first ${cold} jobs)`, cold, marks[0], snapshots[0], snapshots[1]);
  describePhase(`warm (the next ${warm} jobs)`, warm, marks[1], snapshots[1], snapshots[2]);
  child.send('exit');
  await new Promise((resolve) => child.once('exit', resolve));
  admin.disconnect();
  await server.destroy();
}

interface ProfileNode {
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
  readonly hitCount?: number;
  readonly selfSize?: number;
  readonly children?: ProfileNode[];
}

/** The 25 functions of a profile with the most self weight (time, or bytes allocated). */
function topOf(nodes: readonly ProfileNode[], weight: (node: ProfileNode) => number, unit: string): string[] {
  const byFunction = new Map<string, number>();
  let total = 0;
  for (const node of nodes) {
    const { functionName, url, lineNumber } = node.callFrame;
    const name = `${functionName || '(anonymous)'}${url ? ` ${basename(url)}:${lineNumber + 1}` : ''}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + weight(node));
    total += weight(node);
  }
  const share = (w: number): string => `${((w / total) * 100).toFixed(1).padStart(5)}%`;
  return [...byFunction]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([name, w]) => `${share(w)} ${String(Math.round(w)).padStart(9)} ${unit}  ${name}`);
}

const flatten = (node: ProfileNode): ProfileNode[] => [node, ...(node.children ?? []).flatMap(flatten)];

/**
 * PROFILE=<path>: a CPU profile of each phase (ALLOCS=1: a sampling heap profile of what it
 * allocated, collected objects included), written to <path>.<phase>.cpuprofile (.heapprofile),
 * its top entries printed. The cold phase's starts with the application context.
 */
class PhaseProfiler {
  private readonly session = new Session();
  private readonly allocs = process.env.ALLOCS === '1';

  constructor(private readonly path: string) {
    this.session.connect();
  }

  async start(): Promise<void> {
    if (this.allocs) {
      const sampling = { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true };
      await this.session.post('HeapProfiler.startSampling', {
        ...sampling,
        includeObjectsCollectedByMinorGC: true,
      });
    } else {
      await this.session.post('Profiler.enable');
      await this.session.post('Profiler.setSamplingInterval', { interval: 100 });
      await this.session.post('Profiler.start');
    }
  }

  async stop(phase: string): Promise<void> {
    const file = `${this.path}.${phase}.${this.allocs ? 'heapprofile' : 'cpuprofile'}`;
    let top: string[];
    if (this.allocs) {
      const { profile } = await this.session.post('HeapProfiler.stopSampling');
      writeFileSync(file, JSON.stringify(profile));
      top = topOf(flatten(profile.head), (node) => node.selfSize ?? 0, 'B');
    } else {
      const { profile } = await this.session.post('Profiler.stop');
      writeFileSync(file, JSON.stringify(profile));
      const msPerSample = (profile.endTime - profile.startTime) / 1000 / (profile.samples?.length ?? 1);
      top = topOf(profile.nodes as ProfileNode[], (node) => (node.hitCount ?? 0) * msPerSample, 'ms');
    }
    console.log(`top self ${this.allocs ? 'allocations' : 'time'}, ${phase} (${file}):`);
    for (const line of top) console.log(`  ${line}`);
  }
}

async function worker(): Promise<void> {
  const [url, concurrency, coldEnd, warmEnd] = process.argv.slice(3);
  let gcMs = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) gcMs += entry.duration;
  }).observe({ entryTypes: ['gc'] });
  const profiler = process.env.PROFILE ? new PhaseProfiler(process.env.PROFILE) : undefined;
  const clock = (): { at: number; cpu: NodeJS.CpuUsage; gcMs: number } => ({
    at: performance.now(),
    cpu: process.cpuUsage(),
    gcMs,
  });
  let phaseStart = clock();
  let stepCpu = phaseStart.cpu;
  let steps: number[] = [];
  let started = 0;
  let completed = 0;

  @Processor(QUEUE, { concurrency: Number(concurrency) })
  class Noop {
    async process(_job: Job): Promise<void> {
      if (started++ > 0) return;
      phaseStart = clock();
      stepCpu = phaseStart.cpu;
    }
  }
  @Module({
    imports: [EchoMqModule.forRoot({ connection: { url }, queues: { [QUEUE]: { retainCompletedMs: 0 } } })],
    providers: [Noop],
  })
  class WorkerModule {}

  const endPhase = async (phase: Mark['phase']): Promise<void> => {
    const cpu = process.cpuUsage(phaseStart.cpu);
    const ms = performance.now() - phaseStart.at;
    const mark: Mark = { phase, ms, cpuUs: cpu.user + cpu.system, gcMs: gcMs - phaseStart.gcMs, steps };
    process.send?.(mark);
    [phaseStart, steps] = [clock(), []];
    await profiler?.stop(phase);
    if (phase === 'cold') await profiler?.start();
  };

  // The claim loop starts at bootstrap: the profile starts with it, the jobs' clock at the first start.
  const boot = clock();
  await profiler?.start();
  let app: INestApplicationContext | undefined = await NestFactory.createApplicationContext(WorkerModule, {
    logger: ['error', 'warn'],
  });
  const bootCpu = process.cpuUsage(boot.cpu);
  console.log(
    `worker boot (the application context): ${(performance.now() - boot.at).toFixed(0)} ms, ` +
      `${((bootCpu.user + bootCpu.system) / 1000).toFixed(0)} ms of CPU`,
  );
  const loop = app.get(ProcessorExplorer).loop(QUEUE);
  if (!loop) throw new Error(`no claim loop for ${QUEUE}`);
  if (started > 0) throw new Error('handlers started before the completion listener was attached');
  loop.events.on('completed', () => {
    completed += 1;
    if (completed % STEP === 0) {
      const cpu = process.cpuUsage(stepCpu);
      steps.push((cpu.user + cpu.system) / STEP);
      stepCpu = process.cpuUsage();
    }
    if (completed === Number(coldEnd)) void endPhase('cold');
    if (completed === Number(warmEnd)) void endPhase('warm');
  });
  process.once('message', () => {
    void app?.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
    app = undefined;
  });
}

if (process.argv[2] === '--worker') {
  worker().catch((error: Error) => {
    console.error(error);
    process.exit(1);
  });
} else {
  void parent();
}
