import type { ResolvedQueueOptions } from '../queue/queue-options';
import type { HandlerAges } from './job-slots';
import type { WorkerEventEmitter } from './worker-events';

/**
 * What serves one queue in an application, as ProcessorExplorer.loop(queue) hands it out: the
 * claim loop of an unpartitioned queue, or the group of claim loops of a partitioned one (one
 * per physical queue, see PartitionLoops). Everything here is about the queue as users name it:
 * the events are every loop's, the counts their sums.
 */
export interface QueueLoop {
  /**
   * The queue served: as loop(queue) hands it out, the queue's own name (a partitioned queue's
   * logical name). A single ClaimLoop inside a group names its physical queue (`q#2`) here.
   */
  readonly queue: string;
  /** The settings the queue is served with here; `concurrency` is for the whole queue. */
  readonly options: ResolvedQueueOptions;
  /** completed / failed / stale / throttled, per job, after Redis recorded the outcome. */
  readonly events: WorkerEventEmitter;
  /** Jobs whose handler runs on an attempt not yet settled (never more than concurrency). */
  readonly inFlight: number;
  /** Handlers still running after their attempt timed out (they ignored their signal). */
  readonly lingering: number;
  /** Whether a handler runs or a finished job's outcome is still on its way to Redis. */
  readonly busy: boolean;
  /** Whether the queue is claimed from now (by at least one of its loops). */
  readonly claiming: boolean;
  /** Whether a crash suspect of the queue holds the process's claims (see IsolationGate). */
  readonly isolating: boolean;
  /** The handlers running now and the age of the oldest. */
  readonly handlerAges: HandlerAges;
  /** Settlements refused as STALE (the lease had been lost), for monitoring and tests. */
  readonly runner: { readonly staleSettlements: number };
  /** Counts an async @OnWorkerEvent handler as the queue's work until it ends (see ClaimLoop). */
  trackHandlerWork(settling: Promise<void>): void;
  /** Calls `listener` with the reason when an error ends a loop of the queue. */
  onEnded(listener: (reason: string) => void): void;
  /** Starts claiming (again after stopClaiming); ProcessorExplorer.startQueue is the usual way. */
  start(): void;
  /** Stops claiming until start(); in-flight jobs get graceMs, then are released. */
  stopClaiming(graceMs: number): Promise<void>;
  /** Stops claiming for good (shutdown). */
  stop(graceMs: number): Promise<void>;
}
