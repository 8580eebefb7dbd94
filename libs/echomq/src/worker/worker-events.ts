import type { EventEmitter } from 'node:events';
import type { Logger } from '@nestjs/common';
import type { Job } from './job';

/**
 * What a claim loop reports about its jobs, after Redis recorded it:
 * - completed (id, result, job): the job completed;
 * - failed (id, error, state, job): the handler threw (or timed out); state is where the job went
 *   (schedule, pending or dead); job is undefined only when the job's data could not be read;
 * - stale (id, attempt): the job finished after its lease was lost; Redis kept the newer claim's state;
 * - throttled (id, retryAfterMs, scope, job): the handler threw a RateLimitedError; the job is back
 *   in pending with its attempt not spent, and its queue or lane (scope) is held back for retryAfterMs.
 * The job comes last so listeners written for (id, result) keep working.
 * A listener that throws is logged and changes nothing: the outcome is already recorded.
 */
export interface WorkerEvents {
  completed: [id: string, result: unknown, job: Job];
  failed: [id: string, error: unknown, state: 'schedule' | 'pending' | 'dead', job: Job | undefined];
  stale: [id: string, attempt: number];
  throttled: [id: string, retryAfterMs: number, scope: 'queue' | 'lane', job: Job];
}

export type WorkerEventEmitter = EventEmitter<WorkerEvents>;

/**
 * Calls each listener on its own: one that throws (or rejects) is logged, and neither
 * the other listeners nor the job's outcome, already recorded in Redis, are affected.
 */
export function emitIsolated<K extends keyof WorkerEvents>(
  events: WorkerEventEmitter,
  logger: Logger,
  queue: string,
  name: K,
  ...args: WorkerEvents[K]
): void {
  const failed = (error: unknown): void => {
    const message = error instanceof Error ? error.message : String(error);
    logger.error(`A '${name}' listener of queue ${queue} threw: ${message}`);
  };
  for (const listener of events.rawListeners(name) as ((...values: unknown[]) => unknown)[]) {
    try {
      const returned = Reflect.apply(listener, events, args);
      if (returned instanceof Promise) returned.catch(failed);
    } catch (error) {
      failed(error);
    }
  }
}
