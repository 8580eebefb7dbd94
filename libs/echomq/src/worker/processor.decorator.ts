import { applyDecorators, Injectable, SetMetadata } from '@nestjs/common';
import { assertQueueName } from '../keyspace';
import type { QueueOptions } from '../queue/queue-options';

export const PROCESSOR_METADATA = Symbol('echomq:processor');
export const HANDLE_METADATA = Symbol('echomq:handle');

export interface ProcessorMetadata {
  readonly queue: string;
  readonly options: QueueOptions;
}

/**
 * Marks a class as the handler of one queue. The class is a Nest provider; any
 * application that provides it runs a claim loop for the queue. Options given here
 * override the module's per-queue configuration.
 */
export function Processor(queue: string, options: QueueOptions = {}): ClassDecorator {
  assertQueueName(queue);
  return applyDecorators(
    Injectable(),
    SetMetadata<symbol, ProcessorMetadata>(PROCESSOR_METADATA, { queue, options }),
  );
}

/** Routes jobs with this name to the decorated method; `process` handles the rest. */
export function Handle(name: string): MethodDecorator {
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError('@Handle needs a non-empty job name');
  }
  return SetMetadata(HANDLE_METADATA, name);
}
