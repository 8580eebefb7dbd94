import { assertIdempotencyKey, assertJobId } from '../keyspace';
import type { ScriptContext } from './context';
import { translateReplyError } from './reply-errors';

/** A job ready for the enqueue script: validated, payload already serialised. */
export interface NewJobRecord {
  readonly id: string;
  readonly data: string;
  readonly name: string;
  readonly maxAttempts: number;
  /** Relative delay on the server clock; 0 for none. */
  readonly delayMs: number;
  /** Absolute run-at (ms since epoch); 0 for none. Wins over delayMs. */
  readonly runAtMs: number;
  readonly idempotencyKey: string;
}

export interface EnqueueOutcome {
  readonly id: string;
  /** False when an idempotency key matched an existing job, whose id is returned instead. */
  readonly created: boolean;
}

export async function enqueueJobs(
  ctx: ScriptContext,
  jobs: readonly NewJobRecord[],
  idempotencyTtlMs: number,
): Promise<EnqueueOutcome[]> {
  if (jobs.length === 0) return [];
  const { keys } = ctx;
  const args: (string | number)[] = [ctx.eventsMaxLen, idempotencyTtlMs, jobs.length];
  for (const job of jobs) {
    assertJobId(job.id);
    if (job.idempotencyKey !== '') assertIdempotencyKey(job.idempotencyKey);
    args.push(job.id, job.data, job.name, job.maxAttempts, job.delayMs, job.runAtMs, job.idempotencyKey);
  }
  let reply: unknown;
  try {
    reply = await ctx.redis.emqEnqueue(
      keys.pending,
      keys.schedule,
      keys.metrics,
      keys.events,
      keys.wake,
      keys.jobPrefix,
      keys.idempotencyPrefix,
      ...args,
    );
  } catch (error) {
    translateReplyError(error, jobs[0].id);
  }
  const flat = reply as (string | number)[];
  const outcomes: EnqueueOutcome[] = [];
  for (let i = 0; i < flat.length; i += 2) {
    outcomes.push({ id: String(flat[i]), created: Number(flat[i + 1]) === 1 });
  }
  return outcomes;
}
