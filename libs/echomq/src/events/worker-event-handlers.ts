import { Logger } from '@nestjs/common';
import type { MetadataScanner, Reflector } from '@nestjs/core';
import type { JobId } from '../ids';
import type { WorkerEventEmitter, WorkerEvents } from '../worker/job-runner';
import { callIsolated } from './isolate';
import { decoratedMethods, type DecoratedMethod } from './method-metadata';
import { ON_WORKER_EVENT_METADATA } from './on-worker-event.decorator';
import type { WorkerEventPayloads, WorkerEventType } from './worker-event-payloads';

type PayloadBuilders = {
  [K in WorkerEventType]: (queue: string, ...args: WorkerEvents[K]) => WorkerEventPayloads[K];
};

const PAYLOADS: PayloadBuilders = {
  completed: (queue, id, result, job) => ({ type: 'completed', queue, id: id as JobId, job, result }),
  failed: (queue, id, error, state, job) => ({ type: 'failed', queue, id: id as JobId, job, error, state }),
  stale: (queue, id, attempt) => ({ type: 'stale', queue, id: id as JobId, attempt }),
  throttled: (queue, id, retryAfterMs, scope, job) => ({
    type: 'throttled',
    queue,
    id: id as JobId,
    job,
    retryAfterMs,
    scope,
  }),
};

/**
 * Subscribes a @Processor instance's @OnWorkerEvent methods to its claim loop's events:
 * one emitter listener per event type, which builds the payload once and calls each method
 * on its own, so one that throws or rejects is logged and the others still run. Called by
 * the processor explorer when it creates the loop; returns how many methods it bound.
 */
export function bindWorkerEventHandlers(
  instance: object,
  emitter: WorkerEventEmitter,
  reflector: Reflector,
  scanner: MetadataScanner,
  queue: string,
  /** Told of every async handler still running, so the loop counts as busy until it ends. */
  track: (settling: Promise<void>) => void = () => undefined,
): number {
  const methods = decoratedMethods<WorkerEventType>(instance, ON_WORKER_EVENT_METADATA, reflector, scanner);
  const byType = new Map<WorkerEventType, DecoratedMethod<WorkerEventType>[]>();
  for (const method of methods) {
    for (const type of new Set(method.values)) byType.set(type, [...(byType.get(type) ?? []), method]);
  }
  const logger = new Logger(`EchoMQ:${queue}`);
  const className = instance.constructor.name;
  const deliver = (type: WorkerEventType, payload: WorkerEventPayloads[WorkerEventType]): void => {
    for (const handler of byType.get(type) ?? []) {
      const what = `${className}.${handler.name} (worker event '${type}' of job ${payload.id})`;
      const settling = callIsolated(logger, what, () => handler.fn.call(instance, payload));
      if (settling) track(settling);
    }
  };
  // One emitter listener per type that has methods: the payload is built once for all of them.
  if (byType.has('completed')) {
    emitter.on('completed', (...args) => deliver('completed', PAYLOADS.completed(queue, ...args)));
  }
  if (byType.has('failed')) {
    emitter.on('failed', (...args) => deliver('failed', PAYLOADS.failed(queue, ...args)));
  }
  if (byType.has('stale')) {
    emitter.on('stale', (...args) => deliver('stale', PAYLOADS.stale(queue, ...args)));
  }
  if (byType.has('throttled')) {
    emitter.on('throttled', (...args) => deliver('throttled', PAYLOADS.throttled(queue, ...args)));
  }
  return methods.length;
}
