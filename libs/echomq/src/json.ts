/**
 * The JSON text of a value, for payloads, results and progress. `refuse(reason)`
 * builds the error thrown when the value has none (undefined, a function, a BigInt,
 * a cycle), so each caller keeps its own error type.
 */
export function jsonText(value: unknown, refuse: (reason: string) => Error): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw refuse((error as Error).message);
  }
  if (text === undefined) throw refuse(`a ${typeof value} has no JSON form`);
  return text;
}
