import type { PhaseCpu } from './partitions-cpu';
import type { PhaseResult, RunResult } from './partitions-run';
import { median, summarize, type Summary } from './support/stats';

/** The three phases of a run (see partitions-run.ts), in report order. */
export const PHASES = ['enqueue', 'drain', 'live'] as const;
export type PhaseName = (typeof PHASES)[number];

export const PHASE_LABEL: Record<PhaseName, string> = {
  enqueue: 'enqueue alone',
  drain: 'drain alone',
  live: 'live (both at once)',
};

/** Medians over the rounds of one phase of one partition count. */
export interface PhaseSummary {
  readonly rate: Summary;
  readonly wallSeconds: number;
  readonly jobsPerMaster: number[];
  readonly redisSecondsPerMaster: number[];
  readonly producerSeconds: number;
  readonly workerSeconds: number;
  readonly orchestratorSeconds: number;
  readonly machineSeconds: number;
  /** Machine busy time over (nproc x wall time): 100% is every core busy for the whole phase. */
  readonly machinePercentOfCores: number;
  /** The machine's busy share in the second before the phase (NaN when the run did not look). */
  readonly busyBefore: number;
}

function columnMedians(rows: readonly (readonly number[])[]): number[] {
  return (rows[0] ?? []).map((_, column) => median(rows.map((row) => row[column])));
}

function summarizePhase(phases: readonly PhaseResult[], nproc: number): PhaseSummary {
  const of = (pick: (cpu: PhaseCpu) => number): number => median(phases.map((phase) => pick(phase.cpu)));
  return {
    rate: summarize(phases.map((phase) => phase.rate)),
    wallSeconds: of((cpu) => cpu.wallSeconds),
    jobsPerMaster: columnMedians(phases.map((phase) => phase.jobsPerMaster)),
    redisSecondsPerMaster: columnMedians(phases.map((phase) => phase.cpu.redis)),
    producerSeconds: of((cpu) => cpu.producers),
    workerSeconds: of((cpu) => cpu.workers),
    orchestratorSeconds: of((cpu) => cpu.orchestrator),
    machineSeconds: of((cpu) => cpu.machine),
    machinePercentOfCores: of((cpu) => (100 * cpu.machine) / (nproc * cpu.wallSeconds)),
    busyBefore: median(phases.map((phase) => phase.busyBefore)),
  };
}

export interface CountSummary {
  readonly partitions: number;
  readonly placement: RunResult['placement'];
  readonly enqueue: PhaseSummary;
  readonly drain: PhaseSummary;
  readonly live: PhaseSummary & { readonly enqueueRate: Summary };
}

export function summarizeRuns(
  runs: readonly RunResult[],
  counts: readonly number[],
  nproc: number,
): CountSummary[] {
  return counts.map((partitions) => {
    const mine = runs.filter((run) => run.partitions === partitions);
    return {
      partitions,
      placement: mine[0].placement,
      enqueue: summarizePhase(
        mine.map((run) => run.enqueue),
        nproc,
      ),
      drain: summarizePhase(
        mine.map((run) => run.drain),
        nproc,
      ),
      live: {
        ...summarizePhase(
          mine.map((run) => run.live),
          nproc,
        ),
        enqueueRate: summarize(mine.map((run) => run.live.enqueueRate)),
      },
    };
  });
}
