import { JobFailedError, JobNotFoundError, WaitTimeoutError } from '../errors';
import type { QueueKeys } from '../keyspace';
import type { RedisClient } from '../scripts';
import type { JobView } from './job-view';

interface FinishEvent {
  readonly type: string;
  readonly id?: string;
  readonly ids?: string;
  readonly result?: string;
  readonly error?: string;
}

function toEvent(fields: string[]): FinishEvent {
  const event: Record<string, string> = {};
  for (let i = 0; i < fields.length; i += 2) event[fields[i]] = fields[i + 1];
  return event as unknown as FinishEvent;
}

function concerns(event: FinishEvent, id: string): boolean {
  return event.id === id || (event.ids !== undefined && event.ids.split(',').includes(id));
}

/** The job's outcome if this event ends it: a result, or a thrown error. undefined when it does not. */
function settle(event: FinishEvent, id: string): { result: unknown } | undefined {
  if (!concerns(event, id)) return undefined;
  switch (event.type) {
    case 'completed':
      return { result: event.result ? JSON.parse(event.result) : undefined };
    case 'dead':
      throw new JobFailedError(id, event.error ?? 'dead');
    case 'removed':
      throw new JobNotFoundError(id);
    default:
      return undefined;
  }
}

/**
 * Resolves with a job's result, or rejects when it dies, is removed, or the timeout
 * passes. It notes the stream's last entry *before* reading the job's state, then
 * reads events after that entry, so a transition between the two reads is never
 * missed. (A wait that spans more than the stream's cap of events can miss its
 * event; the cap is eventsMaxLen.)
 */
export async function waitForJob(
  client: RedisClient,
  keys: QueueKeys,
  id: string,
  timeoutMs: number,
  readView: () => Promise<JobView | undefined>,
): Promise<unknown> {
  const tail = await client.xrevrange(keys.events, '+', '-', 'COUNT', 1);
  let cursor = tail.length > 0 ? tail[0][0] : '0-0';
  const view = await readView();
  if (view?.state === 'completed') return view.result;
  if (view?.state === 'dead') throw new JobFailedError(id, view.lastError ?? 'dead');
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = deadline - Date.now();
    if (view && left <= 0) throw new WaitTimeoutError(id, timeoutMs);
    // With no job to wait for, only look at what already happened (it may have just finished).
    const reply = await (view
      ? client.xread('COUNT', 1000, 'BLOCK', Math.max(1, left), 'STREAMS', keys.events, cursor)
      : client.xread('COUNT', 1000, 'STREAMS', keys.events, cursor));
    const entries = reply?.[0]?.[1] ?? [];
    for (const [entryId, fields] of entries) {
      cursor = entryId;
      const outcome = settle(toEvent(fields), id);
      if (outcome) return outcome.result;
    }
    if (!view && entries.length < 1000) throw new JobNotFoundError(id);
  }
}
