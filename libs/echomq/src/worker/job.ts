import type { JobId } from '../ids';

/**
 * The job a handler receives. `attempt` is the fencing token of this claim: it
 * grows with every claim and never decreases, so a handler can guard its own side
 * effects with it (e.g. `UPDATE ... WHERE applied_attempt < :attempt`).
 */
export interface Job<T = unknown> {
  readonly id: JobId;
  readonly queue: string;
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
  /** Fires when the lease is lost, the job is removed, or shutdown outlasts its grace period. */
  readonly signal: AbortSignal;
  /** Stores progress (any JSON value) on the job, readable through QueueService.getJob. */
  progress(value: unknown): Promise<void>;
  /**
   * Pushes the lease deadline to now + ms (default: the queue's lease), never earlier than it
   * is: neither this nor the heartbeat ever shortens a lease.
   */
  extendLease(ms?: number): Promise<void>;
}

/** A handler: the returned value completes the job; a thrown error fails it. */
export type JobHandler = (job: Job) => unknown;
