import type { MetadataScanner, Reflector } from '@nestjs/core';

type Method = (...args: unknown[]) => unknown;

/** One decorated method of an instance: its name, the function and what its decorators recorded. */
export interface DecoratedMethod<T> {
  readonly name: string;
  readonly fn: Method;
  readonly values: readonly T[];
}

/**
 * Adds a value to a list kept on a method, so decorators stacked on one method add up
 * (Nest's SetMetadata would keep only the outermost).
 */
export function appendMethodMetadata(key: symbol, value: unknown, method: unknown): void {
  if (typeof method !== 'function') throw new TypeError('an event decorator applies to methods only');
  const existing = (Reflect.getMetadata(key, method) as unknown[] | undefined) ?? [];
  Reflect.defineMetadata(key, [...existing, value], method);
}

/** The methods of an instance's class (inherited ones too) that carry a list under `key`. */
export function decoratedMethods<T>(
  instance: object,
  key: symbol,
  reflector: Reflector,
  scanner: MetadataScanner,
): DecoratedMethod<T>[] {
  const prototype = Object.getPrototypeOf(instance) as Record<string, unknown>;
  const found: DecoratedMethod<T>[] = [];
  for (const name of scanner.getAllMethodNames(prototype)) {
    const fn = prototype[name];
    if (typeof fn !== 'function') continue;
    const values = reflector.get<T[] | undefined>(key, fn as Method);
    if (values && values.length > 0) found.push({ name, fn: fn as Method, values });
  }
  return found;
}
