import type { JobId } from '../ids';

/**
 * The job a handler receives. `attempt` is the fencing token of this claim: it
 * grows with every claim and never decreases, so a handler can guard its own side
 * effects with it (e.g. `UPDATE ... WHERE applied_attempt < :attempt`).
 */
export interface Job<T = unknown> {
  readonly id: JobId;
  /** The queue as producers name it: a partitioned queue's own name, never one partition's (`q#2`). */
  readonly queue: string;
  /**
   * The partition of a partitioned queue the job lives in (2 for `q#2`), for logs and metrics of
   * one shard; undefined for an unpartitioned queue, and for a partitioned queue's jobs still in
   * the queue itself (enqueued before it was partitioned). Route on `queue`, never on this: the
   * partition a job goes to changes with the count (docs/partitions.md).
   */
  readonly partition?: number;
  readonly name: string;
  readonly data: T;
  readonly attempt: number;
  /**
   * Attempts per retry budget this attempt runs under: the job's own (set at enqueue), else
   * this worker's (its @Processor or configured maxAttempts), whichever process enqueued it.
   */
  readonly maxAttempts: number;
  /** 1 for the first attempt of the current budget; equals maxAttempts on the last. */
  readonly attemptInBudget: number;
  readonly enqueuedAt: Date;
  /** The job's lane: 'default' unless it was enqueued with one. */
  readonly lane: string;
  /** Its priority, 0 to 9 (higher is claimed first); 0 unless it was enqueued with one. */
  readonly priority: number;
  /**
   * The deadline in force for this attempt, counted from the handler's start: the job's own
   * timeoutMs, else its processor's; null for none. At the deadline `signal` fires with a
   * JobTimeoutError and the attempt fails with it, whether or not the handler returns.
   */
  readonly timeoutMs: number | null;
  /**
   * Fires when the lease is lost, the job is removed (at once, in whichever process runs it),
   * its timeout passes, or shutdown outlasts its grace period. Its reason is a JobAbortedError
   * (or the JobTimeoutError the attempt fails with) that says which.
   */
  readonly signal: AbortSignal;
  /** Stores progress (any JSON value) on the job, readable through QueueService.getJob. */
  progress(value: unknown): Promise<void>;
  /**
   * Appends a line to the job's log, shown in the job view (QueueService.getJob, GET
   * /queues/:q/jobs/:id) while the row exists; the job keeps its last 100 lines. A line is at
   * most 1,024 bytes (UTF-8): a longer one is refused with InvalidArgumentError. Throws
   * StaleJobError once this claim is no longer current (lease lost, job removed).
   */
  log(line: string): Promise<void>;
  /**
   * Pushes the lease deadline to now + ms (default: the queue's lease), never earlier than it
   * is: neither this nor the heartbeat ever shortens a lease.
   */
  extendLease(ms?: number): Promise<void>;
}

/**
 * A handler: the returned value completes the job; a thrown error fails it (a RateLimitedError
 * instead puts it back in pending without spending the attempt, and holds the queue or lane back).
 */
export type JobHandler = (job: Job) => unknown;
