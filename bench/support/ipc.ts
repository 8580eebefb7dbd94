import type { SystemId } from '../systems/types';

/** What a worker host measured during one run (timestamps are wallNow() ms). */
export interface HostReport {
  readonly started: number;
  readonly completed: number;
  /** First handler start, or null when no job started. */
  readonly firstStartAt: number | null;
  /** Last completion recorded in Redis, or null when none completed. */
  readonly lastCompletedAt: number | null;
  /** enqueue -> handler start, ms, for jobs that carried a timestamp and were not warm-up. */
  readonly startLatenciesMs: readonly number[];
  /**
   * The host's Node CPU (process.cpuUsage, user + system, µs) from the first handler start to the
   * end of the event-loop turn of the last completion; null when no job completed.
   */
  readonly cpuMicros: number | null;
  /** Node CPU (µs) from the `start` message to the first handler start: the worker's creation and first claims. */
  readonly startupCpuMicros: number | null;
}

export type ToHost =
  | {
      readonly type: 'start';
      readonly redisUrl: string;
      readonly queues: readonly string[];
      readonly concurrency: number;
      readonly events: boolean;
    }
  | { readonly type: 'stop' }
  | { readonly type: 'exit' };

export type FromHost =
  | { readonly type: 'booted'; readonly system: SystemId }
  | { readonly type: 'started' }
  | { readonly type: 'progress'; readonly completed: number }
  | { readonly type: 'stopped'; readonly report: HostReport }
  | { readonly type: 'failed'; readonly message: string };

/** How often a host tells the orchestrator its completion count while a worker runs. */
export const PROGRESS_EVERY_MS = 25;
