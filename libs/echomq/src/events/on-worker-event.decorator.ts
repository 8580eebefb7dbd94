import { describeValue, InvalidArgumentError } from '../errors';
import type { EventMethodDecorator } from './event-method-decorator';
import { appendMethodMetadata } from './method-metadata';
import { WORKER_EVENT_TYPES, type WorkerEventPayloads, type WorkerEventType } from './worker-event-payloads';

export const ON_WORKER_EVENT_METADATA = Symbol('echomq:on-worker-event');

const WORKER_TYPES: ReadonlySet<string> = new Set(WORKER_EVENT_TYPES);

/**
 * On a method of a @Processor class: called when this worker's own claim loop settles one
 * of its jobs (completed, failed, stale), after Redis recorded the outcome, with the typed
 * payload (the Job included). Jobs run by other processes are not reported here; listen
 * to the queue's stream (@QueueEventsListener) for those. A method that throws or rejects
 * is logged and changes nothing: the outcome is already recorded.
 */
export function OnWorkerEvent<K extends WorkerEventType>(
  type: K,
): EventMethodDecorator<WorkerEventPayloads<never, never>[K]> {
  if (!WORKER_TYPES.has(type)) {
    throw new InvalidArgumentError(
      `@OnWorkerEvent(${describeValue(type)}): not a worker event; use one of ${WORKER_EVENT_TYPES.join(', ')}`,
    );
  }
  return (_target, _key, descriptor) =>
    appendMethodMetadata(ON_WORKER_EVENT_METADATA, type, descriptor.value);
}
