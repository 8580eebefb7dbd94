import { queueKeys } from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import type { LedgerBook } from './ledger';

/**
 * Which attempts of each job ended in a lease expiry, read back from the queue's event stream
 * after the run. The stream is written by the same script as each transition, so it is the
 * server's own record; the scenario raises eventsMaxLen so that nothing of the run is trimmed,
 * and checks that against the metrics counters (a trimmed stream cannot prove anything).
 *
 * A job's attempt number is the count of claims that named it so far ('claimed' events, in
 * stream order; each claim adds one to attempts, a repeated claim writes no event). An attempt
 * ended in a lease expiry when, while it was the job's latest claim:
 *   - a reaper took the job back ('reaped': its deadline passed on the server clock), or
 *   - its handler was aborted because the worker's local lease estimate ran out before a
 *     heartbeat was confirmed, and the worker then failed the attempt ('failed' whose error
 *     is that abort; its attempt field names the attempt).
 */
export interface LeaseHistory {
  /** Attempts of each job that ended in a lease expiry. */
  readonly expired: ReadonlyMap<string, ReadonlySet<number>>;
  readonly reaped: number;
  readonly leaseFailures: number;
  /** Why the stream cannot be trusted to be whole, if it cannot. */
  readonly incomplete?: string;
}

const PAGE = 10_000;
const LEASE_ABORT = /^JobAbortedError: The lease on job /;

export async function readLeaseHistory(redis: Redis, queue: string): Promise<LeaseHistory> {
  const keys = queueKeys(queue);
  const claims = new Map<string, number>();
  const expired = new Map<string, Set<number>>();
  const mark = (id: string, attempt: number): void => {
    const set = expired.get(id) ?? new Set<number>();
    set.add(attempt);
    expired.set(id, set);
  };
  let claimedIds = 0;
  let reaped = 0;
  let leaseFailures = 0;
  for (let start = '-'; ;) {
    const page = await redis.xrange(keys.events, start, '+', 'COUNT', PAGE);
    for (const [, flat] of page) {
      const fields: Record<string, string> = {};
      for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
      const ids = fields.ids ? fields.ids.split(',') : [];
      if (fields.type === 'claimed') {
        for (const id of ids) claims.set(id, (claims.get(id) ?? 0) + 1);
        claimedIds += ids.length;
      } else if (fields.type === 'reaped') {
        for (const id of ids) mark(id, claims.get(id) ?? 0);
        reaped += ids.length;
      } else if (fields.type === 'failed' && LEASE_ABORT.test(fields.error ?? '')) {
        for (const id of ids) mark(id, Number(fields.attempt));
        leaseFailures += ids.length;
      }
    }
    if (page.length < PAGE) break;
    start = `(${page[page.length - 1][0]}`;
  }
  const metrics = await redis.hgetall(keys.metrics);
  const counted = (name: string): number => Number(metrics[name] ?? 0);
  let incomplete: string | undefined;
  if (claimedIds !== counted('claimed') || reaped !== counted('reaped')) {
    incomplete =
      `the event stream holds ${claimedIds} claims and ${reaped} reaps, the metrics count ` +
      `${counted('claimed')} and ${counted('reaped')}: it was trimmed (raise eventsMaxLen)`;
  }
  return { expired, reaped, leaseFailures, ...(incomplete ? { incomplete } : {}) };
}

/**
 * Handler runs the lease history does not explain. A job runs again only once an earlier
 * attempt of it lost its lease, so every run but the last (by attempt) must be of an attempt
 * that ended in a lease expiry; and one attempt runs once (two runs under one fencing token
 * would mean a claim handed out twice).
 */
export function unexplainedReruns(
  book: LedgerBook,
  history: LeaseHistory,
): { readonly count: number; readonly samples: readonly string[] } {
  let count = 0;
  const samples: string[] = [];
  const note = (text: string): void => {
    count += 1;
    if (samples.length < 3) samples.push(text);
  };
  for (const [id, runs] of book.runs) {
    if (runs.length < 2) continue;
    const attempts = runs.map((run) => run.attempt).sort((a, b) => a - b);
    const expired = history.expired.get(id) ?? new Set<number>();
    for (let i = 0; i + 1 < attempts.length; i++) {
      if (attempts[i] === attempts[i + 1]) note(`${id} ran twice under attempt ${attempts[i]}`);
      else if (!expired.has(attempts[i]))
        note(`${id} ran again after attempt ${attempts[i]}, whose lease did not expire`);
    }
  }
  return { count, samples };
}
