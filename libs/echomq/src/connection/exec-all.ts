import type { ChainableCommander } from 'ioredis';

/**
 * Sends a MULTI or a pipeline and returns its replies in order, throwing the first command
 * error among them, or an error naming `what` when Redis discarded the transaction: the
 * callers read several values as one, and a partial answer would be a wrong one.
 */
export async function execAll(batch: ChainableCommander, what: string): Promise<unknown[]> {
  const replies = await batch.exec();
  if (!replies) throw new Error(`${what} was discarded`);
  return replies.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}
