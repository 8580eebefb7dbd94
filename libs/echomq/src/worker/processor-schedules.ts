import type { Type } from '@nestjs/common';
import type { MetadataScanner, Reflector } from '@nestjs/core';
import { ProcessorDefinitionError } from '../errors';
import type { DeclaredSchedules } from '../schedules/declared-schedules';
import { readScheduleMetadata } from '../schedules/schedule.decorator';
import { HANDLE_METADATA } from './processor.decorator';

/**
 * Adds the @Schedule declarations of a processor to `schedules`: those on the class
 * (occurrences named by the declaration, else handled by process()), and those on its methods
 * (named by the method's @Handle). A method declaration no job could reach fails the boot.
 */
export function addProcessorSchedules(
  schedules: DeclaredSchedules,
  where: { readonly reflector: Reflector; readonly scanner: MetadataScanner },
  metatype: Type,
  instance: object,
  queue: string,
): void {
  const className = metatype.name;
  schedules.addDeclarations(queue, readScheduleMetadata(metatype), `@Schedule on ${className}`);
  const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
  for (const method of where.scanner.getAllMethodNames(prototype)) {
    const fn = prototype[method];
    if (typeof fn !== 'function') continue;
    const declared = readScheduleMetadata(fn);
    if (declared.length === 0) continue;
    const handles = where.reflector.get<string | undefined>(HANDLE_METADATA, fn as () => unknown);
    if (
      handles === undefined &&
      method !== 'process' &&
      declared.some((entry) => entry.declaration.name === undefined)
    ) {
      throw new ProcessorDefinitionError(
        `@Schedule on ${className}.${method}: the method is neither process() nor a @Handle(name), so no job would reach it`,
      );
    }
    schedules.addDeclarations(queue, declared, `@Schedule on ${className}.${method}`, handles ?? '');
  }
}
