/**
 * Checks a parsed JSON body before anything recursive touches it:
 *  - nesting depth: Nest's ValidationPipe, class-transformer and JSON.stringify all
 *    recurse, so a 200 kB body of nested brackets would overflow the stack (a 500);
 *  - the keys __proto__, constructor and prototype: Nest's ValidationPipe deletes them
 *    in place (a prototype-pollution defence), which would silently drop an unknown
 *    field or change a job's payload. Refusing them keeps payloads exactly as sent.
 * The walk is iterative, so it cannot overflow itself.
 */
export const MAX_JSON_DEPTH = 64;
const RESERVED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_REPORTED = 10;

interface Pending {
  readonly value: unknown;
  readonly path: string;
  readonly depth: number;
}

export function jsonShapeProblems(body: unknown): string[] {
  const problems: string[] = [];
  const stack: Pending[] = [{ value: body, path: '', depth: 0 }];
  while (stack.length > 0 && problems.length < MAX_REPORTED) {
    const { value, path, depth } = stack.pop() as Pending;
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_JSON_DEPTH) return [`the body is nested deeper than ${MAX_JSON_DEPTH} levels`];
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const child = path === '' ? key : `${path}.${key}`;
      if (RESERVED_KEYS.has(key)) problems.push(`${child}: a key named "${key}" is not accepted`);
      stack.push({ value: record[key], path: child, depth: depth + 1 });
    }
  }
  return problems;
}
