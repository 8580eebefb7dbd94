import { JOB_IDS, type JobId } from '../ids';
import { DEFAULT_LANE, DEFAULT_PRIORITY } from '../keyspace/lane-name';
import { BUILT_IN_MAX_ATTEMPTS, JOB_LOG_LINES_KEPT, type JobState, type RawJobView } from '../scripts';
import type { JobBackoffPolicy } from './enqueue-options';

/** What a reader sees of one job. `state` is derived from the set that holds the id. */
export interface JobView<T = unknown, R = unknown> {
  readonly id: JobId;
  readonly queue: string;
  readonly name: string;
  readonly state: JobState;
  readonly data: T;
  /** Claims so far (the fencing token of the latest claim). Never decreases. */
  readonly attempts: number;
  /**
   * Attempts per retry budget: the job's own when it was enqueued with one; else that of the
   * worker that claimed it last, and the built-in 3 until a worker first claims it (the
   * serving worker's maxAttempts then applies: docs/options.md, "Which settings a job runs with").
   */
  readonly maxAttempts: number;
  /** Whether maxAttempts is the job's own (set at enqueue) rather than a serving worker's. */
  readonly ownMaxAttempts: boolean;
  /** Attempts left in the current budget before the job goes to dead (counted against maxAttempts). */
  readonly attemptsLeft: number;
  /** The lane the job waits in ('default' when enqueued without one). */
  readonly lane: string;
  /** 0 to 9, higher claimed first (0 when enqueued without one). */
  readonly priority: number;
  /** The job's own timeout per attempt in ms, or null (the serving worker's timeoutMs applies). */
  readonly timeoutMs: number | null;
  /** The job's own backoff, when it was enqueued with one (else the serving worker's applies). */
  readonly backoff?: JobBackoffPolicy;
  /** Mint time of the id, which is when the job was enqueued. */
  readonly enqueuedAt: Date;
  /** For scheduled jobs: when they become due. */
  readonly runAt?: Date;
  /** For active jobs: when the current lease expires unless extended. */
  readonly leaseDeadline?: Date;
  /** The last failed attempt's error, `Name: message` (or why the attempt ended, e.g. a lease that expired). */
  readonly lastError?: string;
  /** That error's stack trace, when it had one (cut to 8 KiB). */
  readonly lastErrorStack?: string;
  /** What the handler returned, while the row is retained after completion. */
  readonly result?: R;
  readonly finishedAt?: Date;
  readonly progress?: unknown;
  /** The job's log (job.log), oldest first: the last JOB_LOG_LINES_KEPT (100) lines written. */
  readonly logs: string[];
  /** Lines written that the row no longer keeps (the oldest, past the last 100). */
  readonly logsDropped: number;
}

/**
 * The log lines of a row: 'gn' counts the lines written, 'g:<n>' holds line n, and only the
 * last JOB_LOG_LINES_KEPT are kept. Read off the row the view already holds: a job that never
 * logged costs nothing more.
 */
function logsOf(f: Readonly<Record<string, string>>): { logs: string[]; logsDropped: number } {
  const written = Number(f.gn ?? 0);
  if (!(written > 0)) return { logs: [], logsDropped: 0 };
  const first = Math.max(1, written - JOB_LOG_LINES_KEPT + 1);
  const logs: string[] = [];
  for (let n = first; n <= written; n++) {
    const line = f[`g:${n}`];
    if (line !== undefined) logs.push(line);
  }
  return { logs, logsDropped: first - 1 };
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
  const maxAttempts = Number(f.m ?? f.w ?? BUILT_IN_MAX_ATTEMPTS);
  const backoff = parseJson(f.o);
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
    ownMaxAttempts: f.m !== undefined,
    attemptsLeft: Math.max(0, maxAttempts - spent),
    // Absent (or empty) fields are the defaults: rows of jobs that use no lane, priority or timeout.
    lane: f.l || DEFAULT_LANE,
    priority: f.y ? Number(f.y) : DEFAULT_PRIORITY,
    timeoutMs: f.t ? Number(f.t) : null,
    ...(typeof backoff === 'object' && backoff !== null ? { backoff: backoff as JobBackoffPolicy } : {}),
    enqueuedAt: new Date(parts ? parts.timeMs : 0),
    ...(raw.state === 'schedule' && raw.score !== null ? { runAt: new Date(raw.score) } : {}),
    ...(raw.state === 'active' && raw.score !== null ? { leaseDeadline: new Date(raw.score) } : {}),
    ...(f.e !== undefined ? { lastError: f.e } : {}),
    ...(f.es !== undefined ? { lastErrorStack: f.es } : {}),
    ...(f.r !== undefined ? { result: parseJson(f.r) } : {}),
    ...(f.f !== undefined ? { finishedAt: new Date(Number(f.f)) } : {}),
    ...(f.p !== undefined ? { progress: parseJson(f.p) } : {}),
    ...logsOf(f),
  };
}
