import type { JobId } from '../ids';
import type { Job } from '../worker/job';

/** The outcomes a worker reports about its own jobs, once Redis has recorded them. */
export const WORKER_EVENT_TYPES = ['completed', 'failed', 'stale', 'throttled'] as const;
export type WorkerEventType = (typeof WORKER_EVENT_TYPES)[number];

/** This worker's handler returned and the job completed. D and R are the types the method declares. */
export interface WorkerCompletedEvent<D = unknown, R = unknown> {
  readonly type: 'completed';
  readonly queue: string;
  readonly id: JobId;
  /** The job as its handler saw it (data, attempt, name...). */
  readonly job: Job<D>;
  /** What the handler returned. */
  readonly result: R;
}

/** This worker's handler threw, and Redis recorded the failure. */
export interface WorkerFailedEvent<D = unknown> {
  readonly type: 'failed';
  readonly queue: string;
  readonly id: JobId;
  /** The job as its handler saw it; undefined only when its data could not be read at all. */
  readonly job: Job<D> | undefined;
  /** What the handler threw. */
  readonly error: unknown;
  /** Where the job went: schedule (a retry after a backoff), pending (a retry now) or dead. */
  readonly state: 'schedule' | 'pending' | 'dead';
}

/**
 * This worker finished a job after its lease was lost: Redis refused the outcome and kept
 * the newer claim's state (the job was reaped, and maybe claimed again elsewhere).
 */
export interface WorkerStaleEvent {
  readonly type: 'stale';
  readonly queue: string;
  readonly id: JobId;
  /** The attempt (fencing token) whose outcome was refused. */
  readonly attempt: number;
}

/**
 * This worker's handler threw a RateLimitedError: the job is back in pending with its attempt
 * unspent, and its queue or its lane (`scope`) waits `retryAfterMs` (the throttle Redis recorded).
 */
export interface WorkerThrottledEvent<D = unknown> {
  readonly type: 'throttled';
  readonly queue: string;
  readonly id: JobId;
  readonly job: Job<D>;
  readonly retryAfterMs: number;
  /** What waits: the whole queue, or only the job's lane. */
  readonly scope: 'queue' | 'lane';
}

/** Each worker event's payload, by type. */
export interface WorkerEventPayloads<D = unknown, R = unknown> {
  completed: WorkerCompletedEvent<D, R>;
  failed: WorkerFailedEvent<D>;
  stale: WorkerStaleEvent;
  throttled: WorkerThrottledEvent<D>;
}
