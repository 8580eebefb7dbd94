import { JOB_IDS, type JobId } from '../ids';
import type { JobState, RawJobView } from '../scripts';

/** What a reader sees of one job. `state` is derived from the set that holds the id. */
export interface JobView<T = unknown> {
  readonly id: JobId;
  readonly queue: string;
  readonly name: string;
  readonly state: JobState;
  readonly data: T;
  /** Claims so far (the fencing token of the latest claim). Never decreases. */
  readonly attempts: number;
  /** Attempts per retry budget. */
  readonly maxAttempts: number;
  /** Attempts left in the current budget before the job goes to dead. */
  readonly attemptsLeft: number;
  /** Mint time of the id, which is when the job was enqueued. */
  readonly enqueuedAt: Date;
  /** For scheduled jobs: when they become due. */
  readonly runAt?: Date;
  /** For active jobs: when the current lease expires unless extended. */
  readonly leaseDeadline?: Date;
  readonly lastError?: string;
  readonly result?: unknown;
  readonly finishedAt?: Date;
  readonly progress?: unknown;
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function toJobView<T>(queue: string, id: JobId, raw: RawJobView): JobView<T> | undefined {
  // An orphan row (in no set, never finished) is not a job anyone can act on: unknown.
  if (raw.state === 'unknown' || raw.state === 'orphan') return undefined;
  const f = raw.fields;
  const attempts = Number(f.a ?? 0);
  const maxAttempts = Number(f.m ?? 1);
  const spent = attempts - Number(f.b ?? 0);
  const parts = JOB_IDS.parts(id);
  return {
    id,
    queue,
    name: f.n ?? '',
    state: raw.state,
    data: parseJson(f.d) as T,
    attempts,
    maxAttempts,
    attemptsLeft: Math.max(0, maxAttempts - spent),
    enqueuedAt: new Date(parts ? parts.timeMs : 0),
    ...(raw.state === 'schedule' && raw.score !== null ? { runAt: new Date(raw.score) } : {}),
    ...(raw.state === 'active' && raw.score !== null ? { leaseDeadline: new Date(raw.score) } : {}),
    ...(f.e !== undefined ? { lastError: f.e } : {}),
    ...(f.r !== undefined ? { result: parseJson(f.r) } : {}),
    ...(f.f !== undefined ? { finishedAt: new Date(Number(f.f)) } : {}),
    ...(f.p !== undefined ? { progress: parseJson(f.p) } : {}),
  };
}
