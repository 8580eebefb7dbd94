/**
 * Asks `read` every 50 ms until `holds` accepts what it returned, and returns that; throws with
 * the last value once `timeoutMs` passed. For values that change on their own schedule (a
 * metrics snapshot is read again at most once a second), never a sleep standing in for an event.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  holds: (value: T) => boolean,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (holds(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`${what}: not within ${timeoutMs} ms; last seen ${JSON.stringify(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
