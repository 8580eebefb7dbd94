/**
 * class-transformer silently skips input keys that name an inherited member of the
 * target ("constructor", "toString", "__proto__", ...), so forbidNonWhitelisted never
 * sees them and such a request would pass as if the key were absent. This finds them by
 * comparing the parsed input with the instance built from it.
 */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** An instance of a DTO class (not a plain object or a payload passed through as is). */
function isDtoInstance(value: unknown): boolean {
  if (!isObject(value) || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto !== null && proto !== Object.prototype;
}

/** Paths ("jobs.0.constructor") of input keys missing from the transformed value. */
export function droppedKeys(input: unknown, transformed: unknown, prefix = ''): string[] {
  // Payloads (`data`) are passed through by reference and are nobody's business here.
  if (!isObject(input) || !isObject(transformed) || input === transformed) return [];
  if (Array.isArray(input)) {
    if (!Array.isArray(transformed)) return [];
    return input.flatMap((item, index) => droppedKeys(item, transformed[index], `${prefix}${index}.`));
  }
  const dropped: string[] = [];
  for (const key of Object.keys(input)) {
    if (!Object.prototype.hasOwnProperty.call(transformed, key)) {
      dropped.push(prefix + key);
      continue;
    }
    const child = transformed[key];
    if (isDtoInstance(child) || Array.isArray(child)) {
      dropped.push(...droppedKeys(input[key], child, `${prefix}${key}.`));
    }
  }
  return dropped;
}
