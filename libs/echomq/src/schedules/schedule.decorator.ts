import 'reflect-metadata';
import { buildDefinition, assertScheduleKey } from './schedule-definition';
import { PAYLOAD_MAX_BYTES } from '../scripts/limits';
import type { ScheduleDeclaration } from './schedule-types';

export const SCHEDULE_METADATA = Symbol('echomq:schedule');

/** One @Schedule as recorded on a class or a method. */
export interface ScheduleMetadata {
  readonly key: string;
  readonly declaration: ScheduleDeclaration;
}

/**
 * Declares a schedule of the processor's queue, upserted at every boot of an application that
 * provides the processor (before its claim loops start; 'unchanged' when nothing changed):
 *
 *   @Processor('reports')
 *   @Schedule('nightly', { cron: '0 3 * * *', tz: 'Europe/Berlin', data: { kind: 'daily' } })
 *   class Reports { process(job: Job) {...} }
 *
 * On a @Handle('name') method, the occurrences carry that name (so that method runs them)
 * unless `name` says otherwise. The spec is checked here, when the class is defined; the data
 * against the queue's payload limit at boot.
 */
export function Schedule(key: string, declaration: ScheduleDeclaration): ClassDecorator & MethodDecorator {
  assertScheduleKey(key);
  const { data, name, ...spec } = declaration;
  buildDefinition(spec, { data, ...(name === undefined ? {} : { name }) }, PAYLOAD_MAX_BYTES);
  const entry: ScheduleMetadata = { key, declaration };
  return (target: object, _property?: string | symbol, descriptor?: PropertyDescriptor): void => {
    const holder = (descriptor ? descriptor.value : target) as object;
    const existing = (Reflect.getMetadata(SCHEDULE_METADATA, holder) as ScheduleMetadata[] | undefined) ?? [];
    Reflect.defineMetadata(SCHEDULE_METADATA, [...existing, entry], holder);
  };
}

/** The schedules declared on a class or a method (in declaration order). */
export function readScheduleMetadata(holder: object): readonly ScheduleMetadata[] {
  return (Reflect.getMetadata(SCHEDULE_METADATA, holder) as ScheduleMetadata[] | undefined) ?? [];
}
