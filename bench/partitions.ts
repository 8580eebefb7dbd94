/**
 * `npm run bench:partitions` (add `-- --quick` for a run of seconds): one busy queue on a
 * 3-master Redis Cluster, with 1 and with 3 partitions. For each count, round after round
 * (1, 3, 1, 3, ...), on a flushed cluster each time:
 *   - enqueue alone: producer processes enqueue the jobs into an idle queue (no workers);
 *   - drain alone: worker processes drain those jobs (first handler start to last completion);
 *   - live: workers idle and waiting, then the producers enqueue; first enqueue to last completion.
 * Each phase reports jobs/s, Redis CPU seconds per master (INFO), jobs per master, and the CPU of
 * the whole machine, which on a small machine bounds every figure. Prints markdown tables on
 * stdout, then one JSON line; progress goes to stderr. Nothing is asserted.
 */
import './support/aliases';
import 'reflect-metadata';
import { loadavg } from 'node:os';
import { configFromArgs, QUIET_BUSY_SHARE } from './partitions-config';
import { BenchCluster } from './partitions-cluster';
import { CpuMeter, settle } from './partitions-cpu';
import { BenchHosts } from './partitions-hosts';
import { describeRun, jsonLine, markdown, type ReportInfo } from './partitions-report';
import { summarizeRuns } from './partitions-summary';
import { runOnce, type RunContext, type RunResult } from './partitions-run';
import { chooseQueue, placementOf } from './partitions-shards';
import { formatDuration } from './support/clock';
import { machine, versions } from './support/environment';

const MASTERS = 3;

const roundedLoad = (): number[] => loadavg().map((load) => Math.round(load * 100) / 100);

async function main(): Promise<void> {
  const startedAt = Date.now() - process.uptime() * 1000;
  const config = configFromArgs(process.argv.slice(2));
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  const machineInfo = machine();
  log(
    `EchoMQ partitions benchmark, ${config.mode} mode: ${config.jobs} jobs, ${config.rounds} round(s) of ${config.partitions.join(' and ')} partition(s)`,
  );

  const cluster = await BenchCluster.start(MASTERS);
  let hosts: BenchHosts | undefined;
  // Whatever ends this process (a signal, a crash) ends its cluster and hosts too.
  process.once('exit', () => {
    hosts?.killAll();
    cluster.kill();
  });
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
  try {
    hosts = await BenchHosts.boot(config.producers, config.workers);
    const queue = await chooseQueue(cluster, config.queue, Math.max(...config.partitions), config.spread);
    const ports = cluster.masters.map((master) => master.port);
    for (const count of config.partitions) {
      const placed = await placementOf(cluster, queue, count);
      log(
        `${count} partition(s): ${placed.map((place) => `${place.physical} on :${ports[place.master]}`).join(', ')}`,
      );
    }
    const redisVersion = await cluster.redisVersion();
    const ctx: RunContext = {
      config,
      cluster,
      hosts,
      meter: new CpuMeter(cluster, hosts),
      queue,
      settle: async () =>
        config.settleMs > 0 ? settle(machineInfo.nproc, QUIET_BUSY_SHARE, config.settleMs) : NaN,
      log,
    };

    if (config.warmUpJobs > 0) {
      const warmUp = { ...ctx, config: { ...config, jobs: config.warmUpJobs } };
      for (const count of config.partitions) {
        log(
          `[warm-up, ${count} partition(s), not measured] ${describeRun(await runOnce(warmUp, count, -1))}`,
        );
      }
    }
    const runs: RunResult[] = [];
    for (let round = 0; round < config.rounds; round++) {
      for (const count of config.partitions) {
        const phaseAt = Date.now();
        const run = await runOnce(ctx, count, round);
        runs.push(run);
        log(
          `[round ${round + 1}/${config.rounds}, ${count} partition(s), ${formatDuration(Date.now() - phaseAt)}] ${describeRun(run)}`,
        );
      }
    }

    const info: ReportInfo = {
      config,
      queue,
      nproc: machineInfo.nproc,
      cpuModel: machineInfo.cpuModel,
      redisVersion,
      nodeVersion: process.version,
      echomq: versions(redisVersion).echomq,
      masterPorts: ports,
      loadAverage: { start: machineInfo.loadAverageAtStart, end: roundedLoad() },
      durationSeconds: (Date.now() - startedAt) / 1000,
    };
    const summaries = summarizeRuns(runs, config.partitions, machineInfo.nproc);
    process.stdout.write(markdown(summaries, info));
    process.stdout.write(jsonLine(summaries, runs, info));
  } finally {
    await hosts?.exitAll();
    await cluster.stop();
  }
}

process.on('unhandledRejection', (reason) => {
  process.stderr.write(`Partitions benchmark failed (unhandled rejection): ${String(reason)}\n`);
  process.exit(1);
});

main().catch((error: Error) => {
  process.stderr.write(`Partitions benchmark failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
