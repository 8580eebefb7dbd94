import { InvalidArgumentError, JobExistsError, type EchoMqError } from '../errors';
import { assertIdempotencyKey, assertJobId, assertLaneName, assertPriority, DEFAULT_LANE } from '../keyspace';
import { replayWindow, type ScriptContext } from './context';
import { ENQUEUE_MANY_MAX } from './limits';
import { newRequestId } from './request-id';
import { translateReplyError } from './reply-errors';
import { runScript } from './run-script';

/** A job ready for the enqueue script: validated, payload already serialised. */
export interface NewJobRecord {
  readonly id: string;
  readonly data: string;
  readonly name: string;
  /**
   * The job's own retry budget, written on its row. Absent when it has none: each claim then
   * applies the serving worker's (docs/options.md, "Which settings a job runs with").
   */
  readonly maxAttempts?: number;
  /** The job's own backoff policy as JSON (fixed or exponential); absent or '' for none. */
  readonly backoff?: string;
  /** Relative delay on the server clock; 0 for none. */
  readonly delayMs: number;
  /** Absolute run-at (ms since epoch); 0 for none. Wins over delayMs. */
  readonly runAtMs: number;
  readonly idempotencyKey: string;
  /** The job's lane; absent or '' for the default lane. Validated by assertLaneName. */
  readonly lane?: string;
  /** The job's priority level 0-9 (higher is claimed first); absent for 0. */
  readonly priority?: number;
  /** The job's own timeout (ms), written on its row; absent: the serving worker's. */
  readonly timeoutMs?: number;
  /**
   * The producer's trace context (row field 'tc', at most TRACE_CONTEXT_MAX_BYTES; see
   * tracing/trace-carrier.ts); absent when tracing is off or there was no context to carry.
   */
  readonly traceContext?: string;
}

export interface EnqueueOutcome {
  readonly id: string;
  /** False when an idempotency key matched an existing job, whose id is returned instead. */
  readonly created: boolean;
}

type GroupReply = ['OK', ...(string | number)[]] | ['EMQ_EXISTS', string];

/** A number as the text Redis receives ('0' for the common none, without a conversion). */
function numberArg(value: number): string {
  return value === 0 ? '0' : String(value);
}

/**
 * Appends one job's 12 ARGV values to `args` (see the header of enqueue.lua.ts), checking
 * what goes into keys (the id, the idempotency key, the lane, the level) so a malformed one
 * throws before anything is sent. Everything goes as text, which ioredis writes as it is.
 */
function pushJobArguments(args: string[], job: NewJobRecord): void {
  assertJobId(job.id);
  if (job.idempotencyKey !== '') assertIdempotencyKey(job.idempotencyKey);
  const { lane } = job;
  const laneArg = lane === undefined || lane === '' || lane === DEFAULT_LANE ? '' : assertLaneName(lane);
  args.push(
    job.id,
    job.data,
    job.name,
    job.maxAttempts === undefined ? '' : String(job.maxAttempts),
    numberArg(job.delayMs),
    numberArg(job.runAtMs),
    job.idempotencyKey,
    job.backoff ?? '',
    laneArg,
    job.priority === undefined ? '' : String(assertPriority(job.priority)),
    job.timeoutMs === undefined ? '' : String(job.timeoutMs),
    job.traceContext ?? '',
  );
}

/**
 * Enqueues groups of jobs in one script call, one group per caller: each group is all or
 * nothing and gets its own outcome (its jobs' outcomes, or the error that refused it alone),
 * so one caller's clash never fails the others. Repeating a call with the same request id
 * returns the first call's outcomes and writes nothing more.
 */
export async function enqueueGroups(
  ctx: ScriptContext,
  groups: readonly (readonly NewJobRecord[])[],
  idempotencyTtlMs: number,
  requestId: string = newRequestId(),
): Promise<(EnqueueOutcome[] | EchoMqError)[]> {
  if (groups.length === 0) return [];
  const { keys } = ctx;
  const sizes: string[] = [];
  let total = 0;
  for (const group of groups) {
    if (group.length === 0) throw new InvalidArgumentError('An enqueue group holds at least one job');
    sizes.push(String(group.length));
    total += group.length;
  }
  if (total > ENQUEUE_MANY_MAX) {
    throw new InvalidArgumentError(`One enqueue call carries at most ${ENQUEUE_MANY_MAX} jobs`);
  }
  const args: string[] = [
    keys.jobPrefix,
    keys.idempotencyPrefix,
    String(ctx.eventsMaxLen),
    String(idempotencyTtlMs),
    String(replayWindow(ctx)),
    String(groups.length),
    ...sizes,
  ];
  for (const group of groups) for (const job of group) pushJobArguments(args, job);
  let reply: GroupReply[];
  try {
    reply = (await runScript(
      ctx,
      'emqEnqueue',
      [keys.fence, keys.reply(requestId), keys.pending, keys.schedule, keys.metrics, keys.events, keys.wake],
      args,
    )) as GroupReply[];
  } catch (error) {
    translateReplyError(error, groups[0][0].id);
  }
  return reply.map((group) => {
    if (group[0] !== 'OK') return new JobExistsError(String(group[1]));
    const outcomes: EnqueueOutcome[] = [];
    for (let i = 1; i < group.length; i += 2) {
      outcomes.push({ id: String(group[i]), created: Number(group[i + 1]) === 1 });
    }
    return outcomes;
  });
}

/** Enqueues one caller's jobs, all or nothing. Throws JobExistsError when an id exists. */
export async function enqueueJobs(
  ctx: ScriptContext,
  jobs: readonly NewJobRecord[],
  idempotencyTtlMs: number,
  requestId?: string,
): Promise<EnqueueOutcome[]> {
  if (jobs.length === 0) return [];
  const [outcome] = await enqueueGroups(ctx, [jobs], idempotencyTtlMs, requestId);
  if (outcome instanceof Error) throw outcome;
  return outcome;
}
