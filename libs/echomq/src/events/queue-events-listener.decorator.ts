import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import { describeValue, InvalidArgumentError } from '../errors';
import { queueNameOf, type QueueRef } from '../queue/queue-definition';
import type { EventMethodDecorator } from './event-method-decorator';
import { appendMethodMetadata } from './method-metadata';
import { isQueueEventType } from './parse-queue-event';
import {
  QUEUE_EVENT_TYPES,
  type AnyQueueEvent,
  type QueueEventPayloads,
  type QueueEventType,
} from './queue-event-payloads';

export const QUEUE_EVENTS_LISTENER_METADATA = Symbol('echomq:queue-events-listener');
export const ON_QUEUE_EVENT_METADATA = Symbol('echomq:on-queue-event');

/** What @OnQueueEvent() with no type records: the method takes every event. */
export const EVERY_QUEUE_EVENT = '*';
export type QueueEventSelector = QueueEventType | typeof EVERY_QUEUE_EVENT;

export interface QueueEventsListenerMetadata {
  readonly queue: string;
}

/**
 * Marks a class as a listener of one queue's event stream: the events of every process
 * that works on or feeds the queue, not only this one's. The class becomes an injectable
 * provider; any application that provides it (producer-only apps included) subscribes at
 * bootstrap and unsubscribes when shutdown begins. Its @OnQueueEvent methods receive the
 * typed payloads.
 */
export function QueueEventsListener<D, R>(queue: QueueRef<D, R>): ClassDecorator {
  const name = queueNameOf(queue);
  return applyDecorators(
    Injectable(),
    SetMetadata<symbol, QueueEventsListenerMetadata>(QUEUE_EVENTS_LISTENER_METADATA, { queue: name }),
  );
}

/**
 * Calls the decorated method of a @QueueEventsListener class with each event of one type
 * (its typed payload), or with every event when no type is given. Several methods may take
 * one type, and stacked decorators give one method several types. A method that throws or
 * rejects is logged; other methods and listeners still get the event.
 */
export function OnQueueEvent(): EventMethodDecorator<AnyQueueEvent<never, never>>;
export function OnQueueEvent<K extends QueueEventType>(
  type: K,
): EventMethodDecorator<QueueEventPayloads<never, never>[K]>;
export function OnQueueEvent(type?: QueueEventType): EventMethodDecorator<never> {
  if (type !== undefined && !isQueueEventType(type)) {
    throw new InvalidArgumentError(
      `@OnQueueEvent(${describeValue(type)}): not an event type; use one of ${QUEUE_EVENT_TYPES.join(', ')}, ` +
        'or no argument for every event',
    );
  }
  const selector: QueueEventSelector = type ?? EVERY_QUEUE_EVENT;
  return (_target, _key, descriptor) =>
    appendMethodMetadata(ON_QUEUE_EVENT_METADATA, selector, descriptor.value);
}
