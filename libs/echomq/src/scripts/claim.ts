import { InvalidArgumentError } from '../errors';
import { replayWindow, type ScriptContext } from './context';
import { SCRIPT_BATCH_MAX } from './limits';
import { BUILT_IN_MAX_ATTEMPTS } from './lua/prelude';
import { runScript } from './run-script';

export interface ClaimedJobRecord {
  readonly id: string;
  readonly attempt: number;
  readonly claimant: string;
  readonly data: string;
  readonly name: string;
  /** The budget this claim runs under: the job's own, else the claiming worker's (ClaimRequest.maxAttempts). */
  readonly maxAttempts: number;
  /** attempts at the start of the current retry budget */
  readonly budgetBase: number;
  /** The job's own backoff policy as JSON, or null when the serving worker's applies. */
  readonly backoff: string | null;
  /** The job's lane ('default' when it was enqueued without one). */
  readonly lane: string;
  /** The job's priority level, 0 to 9. */
  readonly priority: number;
  /** The job's own timeout (ms), or null when the serving worker's applies. */
  readonly timeoutMs: number | null;
  /** The schedule this job is an occurrence of (row 'sk'); absent for other jobs. */
  readonly scheduleKey?: string;
  /**
   * A crash suspect (row 'x'): the job's last lease ran out (reap), so it may have killed the
   * process that ran it. Under ClaimRequest.suspects 'alone' it is then the batch's only job.
   */
  readonly suspect: boolean;
  /**
   * The trace context its producer left on it (row 'tc': W3C traceparent and tracestate as
   * JSON, docs/tracing.md); absent when it was enqueued without one. Read by the worker's
   * tracing only, which ignores a value it cannot parse.
   */
  readonly traceContext?: string;
}

export interface ClaimBatch {
  readonly jobs: ClaimedJobRecord[];
  /** Lease deadline of every job in this batch (server clock, ms). */
  readonly leaseDeadline: number;
  /**
   * Soonest run-at in schedule, or the soonest instant a rate-held lane may run again, after
   * this call; null when there is neither.
   */
  readonly nextRunAt: number | null;
  /** The server clock at the claim (ms). */
  readonly serverNow: number;
  /**
   * Set when the queue is held (a RateLimitedError) or has no room left in its rate window
   * (this call may have used the last of it): the server instant (ms) before which no claim
   * can start a job. A worker sleeps until then rather than waiting for a wake signal.
   */
  readonly limitedUntil: number | null;
  /**
   * The walk ended before a crash suspect this call could not take (ClaimRequest.suspects
   * 'alone' with jobs already taken, or 'none'): it heads its lane, waiting for a claim that
   * takes it alone. Always false for 'any', and in a repeated claim's answer.
   */
  readonly suspectAhead: boolean;
}

/**
 * How a claim hands out crash suspects (ClaimedJobRecord.suspect):
 * - any: like every other job (tools and tests that isolate nothing);
 * - alone: only as the call's one job: met first, it is taken and the call takes nothing
 *   more; met after other jobs, the call ends before it (suspectAhead);
 * - none: never; the call ends before the first one it meets (suspectAhead).
 * A worker asks for 'alone' when its process holds no other job, else 'none'.
 */
export type SuspectRule = 'any' | 'alone' | 'none';

export interface ClaimRequest {
  readonly count: number;
  readonly leaseMs: number;
  /**
   * Unique per call, and the call's request id: each job's claimant is this plus its index
   * in the batch, and a claim repeated with the same prefix (its reply was lost) returns the
   * jobs the first call claimed instead of claiming more.
   */
  readonly claimantPrefix: string;
  readonly promoteLimit?: number;
  /**
   * The claiming worker's maxAttempts (its resolved queue options), default the built-in 3:
   * the budget of every claimed job that was enqueued without one of its own. Recorded on the
   * row, so the reaper and fail, in any process, decide dead-or-retry by it.
   */
  readonly maxAttempts?: number;
  /** How crash suspects are handed out (see SuspectRule); default 'any'. */
  readonly suspects?: SuspectRule;
}

/** Values per claimed job in the script's reply (see the header of claim.lua.ts). */
const FIELDS_PER_JOB = 14;
const HEADER_FIELDS = 5;
const SUSPECT_RULES: readonly SuspectRule[] = ['any', 'alone', 'none'];

export async function claimJobs(ctx: ScriptContext, request: ClaimRequest): Promise<ClaimBatch> {
  const { keys } = ctx;
  if (!Number.isSafeInteger(request.count) || request.count < 1 || request.count > SCRIPT_BATCH_MAX) {
    throw new InvalidArgumentError(
      `A claim takes 1 to ${SCRIPT_BATCH_MAX} jobs per call, got ${request.count}`,
    );
  }
  const suspects = request.suspects ?? 'any';
  if (!SUSPECT_RULES.includes(suspects)) {
    throw new InvalidArgumentError(`A claim's suspects rule is any, alone or none, got ${String(suspects)}`);
  }
  const reply = (await runScript(
    ctx,
    'emqClaim',
    [
      keys.fence,
      keys.reply(request.claimantPrefix),
      keys.pending,
      keys.active,
      keys.schedule,
      keys.metrics,
      keys.events,
      keys.wake,
      keys.paused,
    ],
    [
      keys.jobPrefix,
      request.count,
      request.leaseMs,
      request.claimantPrefix,
      ctx.eventsMaxLen,
      request.promoteLimit ?? SCRIPT_BATCH_MAX,
      replayWindow(ctx),
      request.maxAttempts ?? BUILT_IN_MAX_ATTEMPTS,
      suspects,
    ],
  )) as (string | number | null)[];
  return parseClaimReply(reply);
}

/**
 * The reply as a batch. A record has scheduleKey and traceContext only when the job carries them
 * (readers test for the property), added after the literal rather than spread into it: a spread
 * copies the object, once per claimed job.
 */
export function parseClaimReply(reply: (string | number | null)[]): ClaimBatch {
  const nextRunAt = Number(reply[0]);
  const limitedUntil = Number(reply[2]);
  const jobs: ClaimedJobRecord[] = [];
  for (let i = HEADER_FIELDS; i < reply.length; i += FIELDS_PER_JOB) {
    const data = reply[i + 3];
    const name = reply[i + 4];
    const backoff = reply[i + 7];
    const timeoutMs = reply[i + 10];
    const scheduleKey = reply[i + 11];
    const traceContext = reply[i + 13];
    const record: { -readonly [K in keyof ClaimedJobRecord]: ClaimedJobRecord[K] } = {
      id: String(reply[i]),
      attempt: Number(reply[i + 1]),
      claimant: String(reply[i + 2]),
      data: data === null ? 'null' : String(data),
      name: name === null ? '' : String(name),
      maxAttempts: Number(reply[i + 5] ?? BUILT_IN_MAX_ATTEMPTS),
      budgetBase: Number(reply[i + 6] ?? 0),
      backoff: backoff === null || backoff === undefined ? null : String(backoff),
      lane: String(reply[i + 8]),
      priority: Number(reply[i + 9]),
      timeoutMs: timeoutMs === null || timeoutMs === undefined ? null : Number(timeoutMs),
      suspect: Number(reply[i + 12]) === 1,
    };
    if (typeof scheduleKey === 'string') record.scheduleKey = scheduleKey;
    if (typeof traceContext === 'string') record.traceContext = traceContext;
    jobs.push(record);
  }
  return {
    jobs,
    leaseDeadline: Number(reply[1]),
    nextRunAt: nextRunAt < 0 ? null : nextRunAt,
    serverNow: Number(reply[3]),
    limitedUntil: limitedUntil < 0 ? null : limitedUntil,
    suspectAhead: Number(reply[4]) === 1,
  };
}
