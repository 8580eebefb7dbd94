import type { Type } from '@nestjs/common';
import type { MetadataScanner, Reflector } from '@nestjs/core';
import { InvalidOptionError, ProcessorDefinitionError, UnrecoverableError } from '../errors';
import { refusalDetail } from '../option-checks';
import { assertQueueOptions, type ResolvedQueueOptions } from '../queue/queue-options';
import type { Job, JobHandler } from './job';
import {
  HANDLE_METADATA,
  HANDLE_QUEUE_METADATA,
  PROCESSOR_METADATA,
  type ProcessorMetadata,
} from './processor.decorator';
import { withSchemas } from './schema-dispatch';

/** A discovered @Processor instance with its handlers resolved. */
export interface ProcessorDefinition {
  readonly queue: string;
  readonly className: string;
  readonly metadata: ProcessorMetadata;
  readonly dispatch: (job: Job) => unknown;
}

export function readProcessorMetadata(reflector: Reflector, type: Type): ProcessorMetadata | undefined {
  return reflector.get<ProcessorMetadata | undefined>(PROCESSOR_METADATA, type);
}

/** Builds the dispatch of a processor: @Handle(name) methods first, then process(). Throws when nothing can handle jobs. */
export function defineProcessor(
  instance: object,
  metadata: ProcessorMetadata,
  reflector: Reflector,
  scanner: MetadataScanner,
): ProcessorDefinition {
  const className = instance.constructor.name;
  const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
  const handlers = new Map<string, JobHandler>();
  for (const method of scanner.getAllMethodNames(prototype)) {
    const fn = prototype[method];
    if (typeof fn !== 'function') continue;
    const name = reflector.get<string | undefined>(HANDLE_METADATA, fn as () => unknown);
    if (name === undefined) continue;
    const declaredFor = reflector.get<string | undefined>(HANDLE_QUEUE_METADATA, fn as () => unknown);
    if (declaredFor !== undefined && declaredFor !== metadata.queue) {
      throw new ProcessorDefinitionError(
        `${className}.${method} is a @Handle for queue '${declaredFor}' in a @Processor('${metadata.queue}')`,
      );
    }
    if (handlers.has(name)) {
      throw new ProcessorDefinitionError(`${className} has two @Handle('${name}') methods`);
    }
    handlers.set(name, (fn as JobHandler).bind(instance));
  }
  const processFn = (instance as { process?: unknown }).process;
  const fallback = typeof processFn === 'function' ? (processFn as JobHandler).bind(instance) : undefined;
  if (!fallback && handlers.size === 0) {
    throw new ProcessorDefinitionError(
      `${className} is a @Processor('${metadata.queue}') but has no process(job) method and no @Handle methods`,
    );
  }
  const dispatch = (job: Job): unknown => {
    const handler = handlers.get(job.name) ?? fallback;
    if (!handler) {
      throw new UnrecoverableError(`${className} has no handler for job name '${job.name}'`);
    }
    return handler(job);
  };
  return {
    queue: metadata.queue,
    className,
    metadata,
    dispatch: metadata.definition ? withSchemas(metadata.definition, dispatch) : dispatch,
  };
}

/**
 * Checks a processor's resolved options; wrong values stop the application at boot.
 * Configured layers were checked when QueueService was built, so what fails here is
 * the decorator's: a ProcessorDefinitionError naming the queue and the option, with
 * the InvalidOptionError as its cause.
 */
export function assertWorkerOptions(queue: string, options: ResolvedQueueOptions): ResolvedQueueOptions {
  try {
    assertQueueOptions(options, '');
  } catch (error) {
    if (!(error instanceof InvalidOptionError)) throw error;
    const refused = new ProcessorDefinitionError(`Queue '${queue}': ${error.option} ${refusalDetail(error)}`);
    throw Object.assign(refused, { cause: error });
  }
  return options;
}
