import type { Logger } from '@nestjs/common';

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * Runs one listener so that nothing it does can reach its caller: a synchronous throw
 * and a rejected promise are both logged. The event reader calls listeners this way
 * because its cursor has already moved past the entry: an error that escaped would
 * make every later listener and wait miss the event for good. Returns the settling of an
 * async listener (never rejecting), for callers that must know when it is done.
 */
export function callIsolated(logger: Logger, what: string, call: () => unknown): Promise<void> | undefined {
  try {
    const returned = call();
    if (returned && typeof (returned as PromiseLike<unknown>).then === 'function') {
      return Promise.resolve(returned as PromiseLike<unknown>).then(
        () => undefined,
        (error: unknown) => logger.error(`${what} failed: ${describe(error)}`),
      );
    }
  } catch (error) {
    logger.error(`${what} failed: ${describe(error)}`);
  }
  return undefined;
}
