import { wallNow } from './clock';

/** This process's Node CPU so far (process.cpuUsage: user + system, all its threads), µs. */
export function cpuMicrosNow(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** What a timed section of the producer measured: jobs/s and Node CPU per job. */
export interface TimedEnqueue {
  readonly rate: number;
  /** The orchestrator's (the producer's) Node CPU per job over the timed section, µs. */
  readonly cpuPerJob: number;
}

/** Times `section`, which enqueues `jobs`, in wall time and in this process's CPU. */
export async function timedEnqueue(jobs: number, section: () => Promise<void>): Promise<TimedEnqueue> {
  const cpuBefore = cpuMicrosNow();
  const startedAt = wallNow();
  await section();
  const elapsedMs = wallNow() - startedAt;
  return { rate: jobs / (elapsedMs / 1000), cpuPerJob: (cpuMicrosNow() - cpuBefore) / jobs };
}
