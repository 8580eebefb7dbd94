import type { JobData } from '../support/payload';

/** BullMQ runs twice: with its defaults (completed jobs kept) and with removeOnComplete/removeOnFail. */
export type SystemId = 'echomq' | 'bullmq' | 'bullmq-remove' | 'beequeue';

/** Every figure uses this one queue; Redis is flushed between runs. */
export const BENCH_QUEUE = 'bench';

export interface ProducerOptions {
  /**
   * Whether the producer must see completions (the latency figure only). Only
   * then do systems subscribe to events (BullMQ QueueEvents, Bee-Queue getEvents).
   */
  readonly completions: boolean;
}

/** The producer side, in the orchestrator process. */
export interface Producer {
  /** One job per call; resolves when the system acknowledges it. */
  enqueue(data: JobData): Promise<void>;
  /** The system's bulk path; one call per batch. */
  enqueueBulk(batch: readonly JobData[]): Promise<void>;
  /** Enqueues one job and resolves when the producer sees it complete (needs completions: true). */
  enqueueAndAwait(data: JobData): Promise<void>;
  /** Jobs waiting or active in BENCH_QUEUE (to check that a drain left nothing behind). */
  unfinished(): Promise<number>;
  close(): Promise<void>;
}

export interface WorkerOptions {
  /** The queues the worker serves, each with a no-op handler (BENCH_QUEUE but in the idle-cost figure). */
  readonly queues: readonly string[];
  /** Per queue. */
  readonly concurrency: number;
  /** A producer waits for completions (the latency figure only): publish or keep what it needs. */
  readonly events: boolean;
}

/** What the benchmark's no-op handler and the system's completion signal report to. */
export interface WorkerHooks {
  /** Called first thing in the handler. */
  onStart(data: JobData): void;
  /** Called when the worker has recorded the job's completion in Redis. */
  onComplete(): void;
}

export interface RunningWorker {
  close(): Promise<void>;
}

/**
 * One queue library behind the benchmark's interface: its fast path for
 * producing, and a worker running a no-op async handler.
 */
export interface QueueSystem {
  readonly id: SystemId;
  readonly label: string;
  /** The settings this adapter uses, printed with the results. */
  readonly settings: readonly string[];
  /** The most jobs its bulk path takes in one call, if the library has a limit (a larger batch is split). */
  readonly bulkCallMax?: number;
  /** SHA1 of each Lua script the library may run -> the script's name (to name EVALSHAs seen by MONITOR). */
  scriptNames(): ReadonlyMap<string, string>;
  openProducer(redisUrl: string, options: ProducerOptions): Promise<Producer>;
  /** Runs in a worker host process (see worker-host.ts). */
  startWorker(redisUrl: string, options: WorkerOptions, hooks: WorkerHooks): Promise<RunningWorker>;
}
