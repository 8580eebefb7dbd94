/**
 * `npm run bench` / `npm run bench:quick`: EchoMQ, BullMQ and Bee-Queue side by
 * side on one throwaway redis-server. Prints a markdown table on stdout and writes
 * bench/results/latest.md and latest.json. Progress goes to stderr. Nothing is
 * asserted: these are measurements, not tests.
 */
import './support/aliases';
import 'reflect-metadata';
import { loadavg } from 'node:os';
import { Redis } from 'ioredis';
import { FULL, mostProcesses, QUICK } from './config';
import { drain } from './figures/drain';
import { drainCold } from './figures/drain-cold';
import { enqueueBulk } from './figures/enqueue-bulk';
import { enqueueSingle } from './figures/enqueue-single';
import { flowControl, FLOW_METHOD } from './figures/flow';
import { idleCost } from './figures/idle-cost';
import { latency } from './figures/latency';
import { redisCost } from './figures/redis-cost';
import { writeResults, markdown, type RunInfo } from './report';
import { formatDuration } from './support/clock';
import type { BenchContext } from './support/context';
import { machine, versions } from './support/environment';
import type { Measurement } from './support/measurement';
import { PAYLOAD_BYTES } from './support/payload';
import { redisVersion } from './support/redis-info';
import { BenchRedisServer } from './support/redis-server';
import { WorkerPool } from './support/worker-pool';
import { loadSystem, SYSTEM_IDS } from './systems';

const FIGURES = [enqueueSingle, enqueueBulk, drain, drainCold, latency, redisCost];

const METHOD: readonly string[] = [
  "One redis-server for everything, started by the benchmark on 127.0.0.1 at a free port with --save '' --appendonly no; FLUSHALL SYNC before every run. (The idle figure alone gives each system a redis-server of its own: see below.)",
  'Each figure runs the systems in turn, round after round (EchoMQ, BullMQ (defaults), BullMQ (removeOnComplete/Fail), Bee-Queue, EchoMQ, ...), so drift of the machine affects all alike; ratios are taken within a round.',
  'BullMQ runs twice: as it ships (completed and failed jobs are kept in Redis) and with removeOnComplete / removeOnFail set on every job (they are deleted, as EchoMQ and Bee-Queue do here). Both use the same Worker; only the jobs differ.',
  `Job data: ~${PAYLOAD_BYTES} bytes of JSON. Handler: a no-op async function that records when it started.`,
  'The benchmark is compiled with tsc first (bench/tsconfig.build.json, emit only: `npm run typecheck` checks the types) and runs as plain node from dist/bench. Producers run in the orchestrator process; workers run in child processes (worker hosts), the same way for all systems.',
  'Producer Node CPU per job: process.cpuUsage() (user + system, all threads) of the orchestrator process, which is the producer, read just before and just after the timed jobs of the enqueue figures, divided by their number; nothing else runs in that process meanwhile (no worker is started in those figures).',
  'Warm drains: worker hosts boot once, before the first figure, and stay up: for every run the host creates a fresh worker (new connections; for EchoMQ a new Nest application context with the @Processor) after the prefill, and closes it after the run. Before the warm drain figure each host drains some unmeasured jobs to warm up its JIT.',
  "Cold drains: every run forks fresh worker hosts that have drained nothing (for each round, every system's hosts boot at once before the round; a booted host has loaded its library and run nothing), prefills the jobs, starts the worker and times its first jobs as the warm drain does; the hosts exit after the run. Start-up CPU: the fresh host's Node CPU from the start message to its first handler start (creating the worker, connecting, the first claims).",
  'Drain rate = jobs / (last completion - first handler start), from timestamps taken in the worker processes (one machine clock); process boot and worker start-up are outside the window. A completion is the moment the system says it recorded the job as done in Redis: BullMQ Worker "completed", Bee-Queue "succeeded", EchoMQ the claim loop\'s "completed" worker event (emitted after the complete script answered). Worker Node CPU per job: process.cpuUsage() of each worker process, read at its first handler start and at the end of the event-loop turn of each completion (one reading per turn), summed over the processes, divided by the jobs.',
  'After every drain the benchmark checks that every job completed and nothing is left waiting or active.',
  'Latency: jobs sent open loop at a fixed rate (a slow reply never delays the next send) into an idle worker; the enqueue timestamp travels in the job data; warm-up jobs are left out; percentiles are per round, the table shows their median over the rounds.',
  'Redis cost: used_memory, used_cpu_sys + used_cpu_user and the INFO commandstats calls total (which counts commands run inside Lua scripts, and leaves out the INFO probes) are read before enqueueing, after enqueueing and after the drain.',
  "Idle cost: per round, every system at once, each with a redis-server of its own (so MONITOR sees one process only) and a freshly forked worker host serving the idle queues (EchoMQ: one @Processor class per queue in one Nest application context; BullMQ: one Worker per queue; Bee-Queue: one worker Queue per queue; concurrency 1 each), with no job anywhere. After the worker started and settled, a MONITOR connection counts the lines whose source is a client (lines whose source starts with `lua`, the commands scripts run, are left out) over the window; per minute = count × 60 s / window. EVALSHA lines are named by the SHA1 of each library's own scripts.",
];

async function main(): Promise<void> {
  const startedAt = new Date(Date.now() - process.uptime() * 1000);
  const config = process.argv.includes('--quick') ? QUICK : FULL;
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const machineInfo = machine();
  log(`EchoMQ benchmark, ${config.mode} mode, ${config.rounds} rounds`);

  const redis = await BenchRedisServer.start();
  const admin = new Redis(redis.url);
  const pool = new WorkerPool();
  // Whatever ends this process (a signal, a crash) ends its redis-servers (the idle figure's
  // too) and worker hosts.
  process.once('exit', () => {
    pool.killAll();
    BenchRedisServer.killAll();
  });
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
  try {
    log(`redis-server on ${redis.url}; booting worker hosts...`);
    let phaseAt = Date.now();
    const systems = await Promise.all(SYSTEM_IDS.map((id) => loadSystem(id)));
    await Promise.all(SYSTEM_IDS.map((id) => pool.take(id, mostProcesses(config))));
    log(`worker hosts ready after ${formatDuration(Date.now() - phaseAt)}`);
    // Versions are read before measuring: the build being measured is the tree as it was at the start.
    const versionInfo = versions(await redisVersion(admin));
    const ctx: BenchContext = { config, redis, admin, systems, pool, log };
    const measurements: Measurement[] = [];
    for (const figure of FIGURES) {
      phaseAt = Date.now();
      measurements.push(...(await figure(ctx)));
      log(`(${figure.name}: ${formatDuration(Date.now() - phaseAt)})`);
    }
    phaseAt = Date.now();
    const idle = await idleCost(ctx);
    measurements.push(...idle.measurements);
    log(`(${idleCost.name}: ${formatDuration(Date.now() - phaseAt)})`);
    // EchoMQ only (the other systems have no lanes or shared limits), so a table of its own.
    phaseAt = Date.now();
    const solo = await flowControl(ctx);
    log(`(${flowControl.name}: ${formatDuration(Date.now() - phaseAt)})`);

    const info: RunInfo = {
      config,
      startedAt,
      durationMs: Date.now() - startedAt.getTime(),
      versions: versionInfo,
      machine: machineInfo,
      loadAverageAtEnd: loadavg().map((load) => Math.round(load * 100) / 100),
      systems,
      method: [...METHOD, ...FLOW_METHOD],
    };
    const extras = { solo, idle: idle.breakdown };
    const written = writeResults(measurements, info, extras);
    process.stdout.write(markdown(measurements, info, extras));
    log(`\nWrote ${written.md} and ${written.json}; total ${formatDuration(info.durationMs)}`);
  } finally {
    await pool.closeAll();
    admin.disconnect();
    await redis.stop();
  }
}

process.on('unhandledRejection', (reason) => {
  process.stderr.write(`Benchmark failed (unhandled rejection): ${String(reason)}\n`);
  process.exit(1);
});

main().catch((error: Error) => {
  process.stderr.write(`Benchmark failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
