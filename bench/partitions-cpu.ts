import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { BenchCluster } from './partitions-cluster';
import type { BenchHosts } from './partitions-hosts';
import { sleep, wallNow } from './support/clock';

/** CPU seconds used so far, by whom, at one instant. */
interface CpuSnapshot {
  readonly at: number;
  /** Every process of the machine: the busy time of /proc/stat's cpu line (all cores). */
  readonly machine: number;
  /** Each master's used_cpu_sys + used_cpu_user, in the cluster's master order. */
  readonly redis: readonly number[];
  readonly producers: number;
  readonly workers: number;
  /** This process (the orchestrator: INFO probes, progress messages). */
  readonly orchestrator: number;
}

/** CPU seconds used during one phase, and how long it lasted. */
export interface PhaseCpu {
  readonly wallSeconds: number;
  readonly machine: number;
  readonly redis: readonly number[];
  readonly producers: number;
  readonly workers: number;
  readonly orchestrator: number;
}

/** Clock ticks per second of /proc/stat (USER_HZ). */
const TICKS_PER_SECOND = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Busy CPU seconds of the whole machine since boot: every field of the cpu line but idle and iowait. */
function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return (user + nice + system + irq + softirq + (steal || 0)) / TICKS_PER_SECOND;
}

function ownSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/**
 * Reads every CPU counter of the benchmark at the edges of a phase: the machine's (so the
 * reader sees how close the run came to all its cores), each master's, and each host's.
 */
export class CpuMeter {
  constructor(
    private readonly cluster: BenchCluster,
    private readonly hosts: BenchHosts,
  ) {}

  async snapshot(): Promise<CpuSnapshot> {
    const sum = async (hosts: readonly { cpuSeconds(): Promise<number> }[]): Promise<number> =>
      (await Promise.all(hosts.map((host) => host.cpuSeconds()))).reduce((a, b) => a + b, 0);
    const [redis, producers, workers] = await Promise.all([
      this.cluster.cpuSeconds(),
      sum(this.hosts.producers),
      sum(this.hosts.workers),
    ]);
    return {
      at: wallNow(),
      machine: machineBusySeconds(),
      redis,
      producers,
      workers,
      orchestrator: ownSeconds(),
    };
  }

  static between(before: CpuSnapshot, after: CpuSnapshot): PhaseCpu {
    return {
      wallSeconds: (after.at - before.at) / 1000,
      machine: after.machine - before.machine,
      redis: after.redis.map((seconds, index) => seconds - before.redis[index]),
      producers: after.producers - before.producers,
      workers: after.workers - before.workers,
      orchestrator: after.orchestrator - before.orchestrator,
    };
  }
}

/** Redis and the benchmark's Node processes together. */
export function benchSeconds(cpu: PhaseCpu): number {
  return cpu.redis.reduce((a, b) => a + b, 0) + cpu.producers + cpu.workers + cpu.orchestrator;
}

/** How long one look at the machine's load lasts, and how long settle() waits at most. */
const SETTLE_SAMPLE_MS = 1_000;

/**
 * Waits until the machine is quiet: a one-second look at /proc/stat in which every process
 * together kept at most `maxBusy` (a share of all cores) busy, for at most `timeoutMs`. On a
 * machine shared with other work, a run begun under load measures that load too. Returns the
 * share of the last look, which the report keeps with the run.
 */
export async function settle(nproc: number, maxBusy: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = machineBusySeconds();
    await sleep(SETTLE_SAMPLE_MS);
    const busy = (machineBusySeconds() - before) / (nproc * (SETTLE_SAMPLE_MS / 1000));
    if (busy <= maxBusy || Date.now() >= deadline) return busy;
  }
}
