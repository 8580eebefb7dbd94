import type { StandardSchemaV1 } from '@standard-schema/spec';
import type { SchemaIssue } from '../errors';

export type SchemaCheck<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly issues: SchemaIssue[] };

/**
 * Runs a Standard Schema over a value (sync or async validators alike) and returns its
 * output, which may differ from the input (defaults filled in, strings coerced), or its
 * issues with plain paths, so errors can be shown and sent over HTTP as JSON.
 */
export async function checkWithSchema<T>(
  schema: StandardSchemaV1<unknown, T>,
  value: unknown,
): Promise<SchemaCheck<T>> {
  const result = await schema['~standard'].validate(value);
  if (!result.issues) return { ok: true, value: result.value };
  return { ok: false, issues: result.issues.map(plainIssue) };
}

function plainIssue(issue: StandardSchemaV1.Issue): SchemaIssue {
  const path = (issue.path ?? []).map((segment) => {
    const key = typeof segment === 'object' && segment !== null ? segment.key : segment;
    return typeof key === 'number' ? key : String(key);
  });
  return { message: issue.message, path };
}
