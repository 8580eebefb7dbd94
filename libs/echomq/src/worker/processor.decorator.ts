import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import { assertQueueName } from '../keyspace';
import {
  isQueueDefinition,
  queueNameOf,
  type QueueDefinition,
  type QueueRef,
} from '../queue/queue-definition';
import type { QueueOptions } from '../queue/queue-options';
import type { Job } from './job';

export const PROCESSOR_METADATA = Symbol('echomq:processor');
export const HANDLE_METADATA = Symbol('echomq:handle');
/** The queue a typed @Handle(Queue, name) was declared for, checked against its processor's at boot. */
export const HANDLE_QUEUE_METADATA = Symbol('echomq:handle-queue');

export interface ProcessorMetadata {
  readonly queue: string;
  readonly options: QueueOptions;
  /** The typed definition the processor was declared with, if any (its schemas apply at claim). */
  readonly definition?: QueueDefinition;
}

/** What a handler of a queue typed <D, R> must accept and return. */
export type HandlerOf<D, R> = (job: Job<D>) => R | Promise<R>;

/**
 * `unknown` when a processor instance fits a queue typed <D, R> (it has no process(), or
 * one that takes Job<D> and returns R), `never` otherwise, which makes the decorator's
 * argument impossible and the class a compile error.
 */
export type ProcessorFit<I, D, R> = I extends { process: infer P }
  ? [P] extends [HandlerOf<D, R>]
    ? unknown
    : never
  : unknown;

/** A class decorator that only applies to processors that fit a queue typed <D, R>. */
export type TypedClassDecorator<D, R> = <C extends abstract new (...args: never[]) => object>(
  target: C & ProcessorFit<InstanceType<C>, D, R>,
) => void;

/** A method decorator that only applies to handlers of a queue typed <D, R>. */
export type TypedMethodDecorator<D, R> = <M extends HandlerOf<D, R>>(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => void;

/**
 * Marks a class as the handler of one queue. The class is a Nest provider; any
 * application that provides it runs a claim loop for the queue. Options given here
 * override the module's per-queue configuration.
 *
 * Given a typed definition (`@Processor(Emails)`), the class must fit it: a process()
 * taking another payload or returning another result does not compile, and the
 * definition's schemas are checked when a job is claimed and before it completes.
 */
export function Processor<D, R>(
  queue: QueueDefinition<D, R, unknown>,
  options?: QueueOptions,
): TypedClassDecorator<D, R>;
export function Processor(queue: string, options?: QueueOptions): ClassDecorator;
export function Processor(
  queue: QueueRef | QueueDefinition<unknown, unknown, unknown>,
  options: QueueOptions = {},
): ClassDecorator {
  const metadata: ProcessorMetadata = isQueueDefinition(queue)
    ? { queue: queueNameOf(queue), options, definition: queue }
    : { queue: assertQueueName(queue), options };
  return applyDecorators(Injectable(), SetMetadata<symbol, ProcessorMetadata>(PROCESSOR_METADATA, metadata));
}

/**
 * Routes jobs with this name to the decorated method; `process` handles the rest.
 * `@Handle(Emails, 'welcome')` also checks the method's type against the queue's:
 * it must take Job<D> and return R.
 */
export function Handle<D, R>(queue: QueueDefinition<D, R, unknown>, name: string): TypedMethodDecorator<D, R>;
export function Handle(name: string): MethodDecorator;
export function Handle(
  queueOrName: QueueDefinition<unknown, unknown, unknown> | string,
  maybeName?: string,
): MethodDecorator {
  const name = typeof queueOrName === 'string' ? queueOrName : maybeName;
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError('@Handle needs a non-empty job name');
  }
  if (typeof queueOrName === 'string') return SetMetadata(HANDLE_METADATA, name);
  return applyDecorators(
    SetMetadata(HANDLE_METADATA, name),
    SetMetadata(HANDLE_QUEUE_METADATA, queueNameOf(queueOrName)),
  );
}
