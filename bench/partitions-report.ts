import type { PartitionBenchConfig } from './partitions-config';
import { benchSeconds, type PhaseCpu } from './partitions-cpu';
import type { PhaseResult, RunResult } from './partitions-run';
import { PHASE_LABEL, PHASES, type CountSummary } from './partitions-summary';
import type { Summary } from './support/stats';

/** What the report says about the run as a whole. */
export interface ReportInfo {
  readonly config: PartitionBenchConfig;
  readonly queue: string;
  readonly nproc: number;
  readonly cpuModel: string;
  readonly redisVersion: string;
  readonly nodeVersion: string;
  readonly echomq: string;
  readonly masterPorts: readonly number[];
  readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] };
  readonly durationSeconds: number;
}

const fixed = (value: number, digits: number): string =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function rate(summary: Summary, rounds: number): string {
  const middle = fixed(summary.median, 0);
  return rounds > 1 ? `${middle} (${fixed(summary.min, 0)}–${fixed(summary.max, 0)})` : middle;
}

function row(cells: readonly (string | number)[]): string {
  return `| ${cells.join(' | ')} |`;
}

function header(cells: readonly string[]): string[] {
  return [row(cells), row(cells.map(() => '---'))];
}

function placementText(summary: CountSummary, ports: readonly number[]): string {
  return summary.placement.map((place) => `${place.physical} → :${ports[place.master]}`).join(', ');
}

export function markdown(summaries: readonly CountSummary[], info: ReportInfo): string {
  const { config, nproc, masterPorts: ports } = info;
  const spread = config.rounds > 1 ? `median (min–max) of ${config.rounds} rounds` : 'one round';
  const lines: string[] = [
    `## One busy queue on a ${ports.length}-master cluster, ${config.jobs.toLocaleString('en-US')} jobs per phase`,
    '',
    `Queue \`${info.queue}\`; ${config.producers} producer process(es), enqueue() with ${config.inFlight} in flight each; ` +
      `${config.workers} worker process(es), concurrency ${config.concurrency} each. Jobs/s, ${spread}.`,
    '',
    ...header(['partitions', 'enqueue alone', 'drain alone', 'live: end to end', 'live: enqueue']),
    ...summaries.map((s) =>
      row([
        s.partitions,
        rate(s.enqueue.rate, config.rounds),
        rate(s.drain.rate, config.rounds),
        rate(s.live.rate, config.rounds),
        rate(s.live.enqueueRate, config.rounds),
      ]),
    ),
    '',
    'Per shard (medians): jobs that went to the master, and its Redis CPU seconds (INFO used_cpu_sys + used_cpu_user) ' +
      'during each phase, with the share of one core that is over the phase.',
    '',
    ...header([
      'partitions',
      'master',
      'jobs',
      ...PHASES.map((phase) => `Redis CPU s, ${PHASE_LABEL[phase]}`),
    ]),
    ...summaries.flatMap((s) =>
      ports.map((port, master) =>
        row([
          s.partitions,
          `:${port}`,
          fixed(s.enqueue.jobsPerMaster[master], 0),
          ...PHASES.map((phase) => {
            const seconds = s[phase].redisSecondsPerMaster[master];
            return `${fixed(seconds, 2)} (${fixed((100 * seconds) / s[phase].wallSeconds, 0)}%)`;
          }),
        ]),
      ),
    ),
    '',
    'What a job costs (medians): CPU microseconds per job of all masters together and of the Node processes, and the ' +
      'rate at which the busiest master would use one whole core (jobs / its CPU seconds): where Redis, not this machine, would stop the queue.',
    '',
    ...header([
      'partitions',
      'phase',
      'Redis µs/job',
      'Node µs/job',
      'busiest master s',
      'Redis-bound ceiling, jobs/s',
    ]),
    ...summaries.flatMap((s) =>
      PHASES.map((phase) => {
        const p = s[phase];
        const redis = p.redisSecondsPerMaster.reduce((a, b) => a + b, 0);
        const busiest = Math.max(...p.redisSecondsPerMaster);
        return row([
          s.partitions,
          PHASE_LABEL[phase],
          fixed((1e6 * redis) / config.jobs, 1),
          fixed((1e6 * (p.producerSeconds + p.workerSeconds)) / config.jobs, 1),
          fixed(busiest, 2),
          fixed(config.jobs / busiest, 0),
        ]);
      }),
    ),
    '',
    `The machine (${nproc} cores): busy time of every process (/proc/stat) against ${nproc} x the phase's wall time, ` +
      "and the CPU seconds of the benchmark's processes; rest = the machine's busy time they do not account for (other processes on the machine, interrupt time).",
    '',
    ...header([
      'partitions',
      'phase',
      'wall s',
      `machine busy, % of ${nproc} cores`,
      'busy just before',
      'Redis s',
      'producers s',
      'workers s',
      'orchestrator s',
      'rest s',
    ]),
    ...summaries.flatMap((s) =>
      PHASES.map((phase) => {
        const p = s[phase];
        const redis = p.redisSecondsPerMaster.reduce((a, b) => a + b, 0);
        const bench = redis + p.producerSeconds + p.workerSeconds + p.orchestratorSeconds;
        return row([
          s.partitions,
          PHASE_LABEL[phase],
          fixed(p.wallSeconds, 2),
          `${fixed(p.machinePercentOfCores, 0)}%`,
          Number.isNaN(p.busyBefore) ? 'not looked' : `${fixed(100 * p.busyBefore, 0)}%`,
          fixed(redis, 2),
          fixed(p.producerSeconds, 2),
          fixed(p.workerSeconds, 2),
          fixed(p.orchestratorSeconds, 2),
          fixed(Math.max(0, p.machineSeconds - bench), 2),
        ]);
      }),
    ),
    '',
    `Placement: ${summaries.map((s) => `${s.partitions} partition(s): ${placementText(s, ports)}`).join('; ')}.`,
    `Machine: ${nproc} cores (${info.cpuModel}); redis-server ${info.redisVersion}; Node ${info.nodeVersion}; EchoMQ ${info.echomq}; ` +
      `load average ${info.loadAverage.start.join(' ')} at start, ${info.loadAverage.end.join(' ')} at end; ` +
      `${fixed(info.durationSeconds, 0)} s in all.`,
    '',
  ];
  return lines.join('\n');
}

/** The whole result as one line of JSON (the summaries, and every run's raw figures). */
export function jsonLine(
  summaries: readonly CountSummary[],
  runs: readonly RunResult[],
  info: ReportInfo,
): string {
  return `${JSON.stringify({ bench: 'partitions', ...info, summaries, runs: runs.map(rounded) })}\n`;
}

/** Raw figures to 4 significant decimals, so the line stays readable. */
function rounded(run: RunResult): unknown {
  return JSON.parse(
    JSON.stringify(run, (_key, value: unknown) =>
      typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1e4) / 1e4 : value,
    ),
  );
}

/** For the progress log: one line per run. */
export function describeRun(run: RunResult): string {
  const shards = (phase: PhaseResult): string => phase.cpu.redis.map((s) => fixed(s, 2)).join('/');
  const cores = (cpu: PhaseCpu): string => fixed(cpu.machine / cpu.wallSeconds, 2);
  return (
    `enqueue ${fixed(run.enqueue.rate, 0)}/s, drain ${fixed(run.drain.rate, 0)}/s, live ${fixed(run.live.rate, 0)}/s; ` +
    `jobs per master ${run.enqueue.jobsPerMaster.join('/')}; Redis CPU s per master: drain ${shards(run.drain)}, ` +
    `live ${shards(run.live)}; machine cores busy: drain ${cores(run.drain.cpu)}, live ${cores(run.live.cpu)} ` +
    `(bench processes ${fixed(benchSeconds(run.live.cpu), 2)} s of ${fixed(run.live.cpu.machine, 2)} s in live)`
  );
}
