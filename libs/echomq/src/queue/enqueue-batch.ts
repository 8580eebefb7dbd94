import type { DurableScriptContext } from '../durability/durable-context';
import { InvalidArgumentError } from '../errors';
import type { EnqueueOutcome } from '../scripts';
import { ENQUEUE_MANY_MAX } from '../scripts/limits';
import { isKeyed } from './dedupe-options';
import { checkEnqueueItem, type JobPlace, type JobToEnqueue } from './enqueue-options';

/** Where some items of a batch go: the queue's context and the partition tag their ids carry. */
export interface EnqueueGroup {
  readonly ctx: DurableScriptContext;
  readonly tag?: number;
  /** Indices into the batch, in the order their ids come back. */
  readonly items: readonly number[];
}

/**
 * What a batch must be before any item is looked at: an array of at most ENQUEUE_MANY_MAX
 * objects, none of them keyed (those go one at a time, through submit). Refusals name an item
 * by its index in the caller's batch (`jobs[3]`), however the batch is split afterwards.
 */
export function checkBatch<T>(jobs: readonly JobToEnqueue<T>[]): void {
  if (!(jobs instanceof Array) || jobs.length > ENQUEUE_MANY_MAX) {
    throw new InvalidArgumentError(
      `enqueueMany takes an array of at most ${ENQUEUE_MANY_MAX} jobs (one script call moves at most that many, ` +
        'so Redis is never blocked for more than a few milliseconds); split larger batches',
    );
  }
  // Before isKeyed or a schema reads a field of an item that may not be an object.
  for (let index = 0; index < jobs.length; index++) checkEnqueueItem(jobs[index], index);
  const keyed = jobs.findIndex(isKeyed);
  if (keyed >= 0) {
    throw new InvalidArgumentError(
      `${jobs.length > 1 ? `jobs[${keyed}]: ` : ''}a job with debounce or throttle is enqueued one at a ` +
        'time (enqueue or submit), not in enqueueMany: each is one script call that may replace or ' +
        'match an existing job',
    );
  }
}

/** How an item is named in a refusal: `jobs[3]` in a batch of several, nothing for one job. */
export function itemPlace(batchSize: number, index: number): JobPlace {
  return batchSize > 1 ? index : '';
}

export function outcomeOf(outcome: EnqueueOutcome): 'created' | 'matched' {
  return outcome.created ? 'created' : 'matched';
}
