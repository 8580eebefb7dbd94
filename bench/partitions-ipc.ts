/** What the partitions benchmark's orchestrator and its child processes (hosts) say to each other. */

export type HostRole = 'producer' | 'worker';

/** The Nest application a host opens for one phase. */
export interface AppSettings {
  readonly nodes: readonly { readonly host: string; readonly port: number }[];
  readonly queue: string;
  readonly partitions: number;
  /** Worker only: the queue's concurrency in this process. */
  readonly concurrency: number;
  /**
   * Worker only: claim from application bootstrap (an ordinary boot, reaper included), or only
   * once told `start` (`startProcessors: false`, then ProcessorExplorer.startQueue), so that
   * the boot stays outside a drain's measurement.
   */
  readonly claimAtBoot: boolean;
}

/** What a worker host's handlers did while its application was open (times are wallNow() ms). */
export interface WorkerReport {
  readonly started: number;
  readonly completed: number;
  readonly firstStartAt: number | null;
  readonly lastCompletedAt: number | null;
}

/** One producer's enqueue calls (times are wallNow() ms). */
export interface EnqueueReport {
  readonly firstAt: number;
  readonly lastAt: number;
}

export type ToHost =
  | { readonly type: 'open'; readonly settings: AppSettings }
  | { readonly type: 'enqueue'; readonly from: number; readonly count: number; readonly inFlight: number }
  | { readonly type: 'start' }
  | { readonly type: 'cpu' }
  | { readonly type: 'close' }
  | { readonly type: 'exit' };

export type FromHost =
  | { readonly type: 'booted' }
  | { readonly type: 'opened' }
  | { readonly type: 'enqueued'; readonly report: EnqueueReport }
  | { readonly type: 'started' }
  | { readonly type: 'progress'; readonly completed: number }
  /** The host process's CPU time so far (user + system), seconds. */
  | { readonly type: 'cpu'; readonly seconds: number }
  | { readonly type: 'closed'; readonly report: WorkerReport | null }
  | { readonly type: 'failed'; readonly message: string };

/** How often a worker host tells the orchestrator its completion count. */
export const PROGRESS_EVERY_MS = 25;
