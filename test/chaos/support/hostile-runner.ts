import type { QueueService } from '@app/echomq';
import { RawClient } from '../../api/support/raw-http';
import type { HttpCase } from './hostile-http-jobs';
import type { LibraryCall } from './hostile-library-calls';
import type { HostileTally } from './hostile-tally';

/** A library call that has neither settled nor failed by then is hung (its deadline is a command deadline or two). */
const CALL_DEADLINE_MS = 5_000;

/**
 * Sends every case over `lanes` keep-alive connections at once (each a RawClient, so bodies
 * and paths go byte for byte), with the bearer token unless the case brings its own headers.
 */
export async function sendAll(
  url: string,
  token: string,
  cases: readonly HttpCase[],
  tally: HostileTally,
  lanes = 4,
): Promise<void> {
  let next = 0;
  const lane = async (): Promise<void> => {
    const client = new RawClient(url);
    try {
      while (next < cases.length) {
        const item = cases[next++];
        const headers = item.req.headers ?? { authorization: `Bearer ${token}` };
        try {
          tally.http(item, await client.send({ ...item.req, headers }));
        } catch (error) {
          tally.http(item, error instanceof Error ? error : new Error(String(error)));
        }
      }
    } finally {
      client.close();
    }
  };
  await Promise.all(Array.from({ length: lanes }, lane));
}

/** Makes every call on `queues`, one at a time, and records how each ended. */
export async function callAll(
  queues: QueueService,
  calls: readonly LibraryCall[],
  tally: HostileTally,
): Promise<void> {
  const methods = queues as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const item of calls) {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'hung'>(
      (resolve) => (timer = setTimeout(() => resolve('hung'), CALL_DEADLINE_MS)),
    );
    const settled = (async () => {
      try {
        // A call may also throw before returning its promise: that counts the same.
        return { settled: 'resolved' as const, value: await methods[item.method](...item.args) };
      } catch (error) {
        return { settled: 'rejected' as const, value: error };
      }
    })();
    const outcome = await Promise.race([settled, deadline]);
    clearTimeout(timer);
    if (outcome === 'hung') tally.library(item, { settled: 'hung' });
    else {
      // A listener that was accepted would stay subscribed: end it.
      if (item.method === 'subscribe' && typeof outcome.value === 'function') (outcome.value as () => void)();
      tally.library(item, outcome);
    }
  }
}
