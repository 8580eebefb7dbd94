/**
 * Waits for `promise`, but no longer than `ms`: a scenario under fault must end by itself, so a
 * wait on something the fault may have wedged (a producer that never finishes) fails the run
 * with a sentence saying what did not happen, instead of hanging it.
 */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
