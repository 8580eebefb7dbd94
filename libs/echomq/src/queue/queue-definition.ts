import type { StandardSchemaV1 } from '@standard-schema/spec';
import { assertQueueName } from '../keyspace';

/**
 * A queue's name with the types of its payload (D) and its handlers' result (R), shared by
 * the producers that enqueue to it and the processor that serves it: a wrong payload, a
 * wrong result or a misspelt queue is a compile error instead of a job that waits forever.
 *
 *   export const Emails = defineQueue<EmailData, EmailResult>('emails');
 *   export const Emails = defineQueue('emails', { data: emailSchema });   // types from the schema
 *
 * Schemas are optional and follow the Standard Schema interface, so zod, valibot, arktype
 * and others work without EchoMQ depending on any of them. A data schema is checked at
 * enqueue (a refused payload writes nothing) and again at claim (a job that no longer
 * passes goes to dead); a result schema is checked before a job completes.
 *
 * A schema may transform (defaults, coercions): producers enqueue its input type (I), the
 * job stores that input as given, and the handler receives the schema's output (D), parsed
 * at claim. Stored data is JSON, so a data schema describes the JSON form of the payload.
 */
export interface QueueDefinition<D = unknown, R = unknown, I = D> {
  readonly name: string;
  readonly schemas: QueueSchemas<D, R, I>;
  /** Carries the types only; never set at run time. */
  readonly types?: { readonly data: D; readonly result: R; readonly input: I };
}

export interface QueueSchemas<D, R, I = D> {
  readonly data?: StandardSchemaV1<I, D>;
  readonly result?: StandardSchemaV1<unknown, R>;
}

/** A queue given by name (untyped) or by its definition (typed). */
export type QueueRef<D = unknown, R = unknown> = string | QueueDefinition<D, R>;

/** The payload type a handler of the queue receives (a data schema's output). */
export type DataOf<Q> = Q extends QueueDefinition<infer D, unknown, unknown> ? D : unknown;
/** The result type of a queue definition. */
export type ResultOf<Q> = Q extends QueueDefinition<unknown, infer R, unknown> ? R : unknown;
/** The payload type producers enqueue and jobs store (a data schema's input; else DataOf). */
export type InputOf<Q> = Q extends QueueDefinition<unknown, unknown, infer I> ? I : unknown;

type OutputOf<S> = S extends StandardSchemaV1<unknown, infer O> ? O : unknown;
type SchemaInputOf<S, Otherwise> = S extends StandardSchemaV1<infer I, unknown> ? I : Otherwise;

/** Defines a queue whose types are given explicitly. */
export function defineQueue<D, R = unknown>(name: string): QueueDefinition<D, R>;
/** Defines a queue whose types come from its schemas (a schema's output type). */
export function defineQueue<
  DS extends StandardSchemaV1 | undefined = undefined,
  RS extends StandardSchemaV1 | undefined = undefined,
>(
  name: string,
  schemas: { readonly data?: DS; readonly result?: RS },
): QueueDefinition<OutputOf<DS>, OutputOf<RS>, SchemaInputOf<DS, unknown>>;
export function defineQueue(name: string, schemas: QueueSchemas<unknown, unknown> = {}): QueueDefinition {
  assertQueueName(name);
  for (const [role, schema] of Object.entries(schemas)) {
    if (schema !== undefined && !isStandardSchema(schema)) {
      throw new TypeError(
        `defineQueue('${name}'): the ${role} schema does not implement the Standard Schema interface ('~standard')`,
      );
    }
  }
  return Object.freeze({ name, schemas: Object.freeze({ ...schemas }) });
}

/** The name of a queue given either way (validated). */
export function queueNameOf(
  queue: QueueRef<unknown, unknown> | QueueDefinition<unknown, unknown, unknown>,
): string {
  return typeof queue === 'string' ? assertQueueName(queue) : assertQueueName(queue.name);
}

export function isQueueDefinition(value: unknown): value is QueueDefinition {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { name?: unknown }).name === 'string' &&
    typeof (value as { schemas?: unknown }).schemas === 'object'
  );
}

function isStandardSchema(value: unknown): value is StandardSchemaV1 {
  const standard = (value as { '~standard'?: { validate?: unknown } } | null)?.['~standard'];
  return typeof standard === 'object' && standard !== null && typeof standard.validate === 'function';
}
