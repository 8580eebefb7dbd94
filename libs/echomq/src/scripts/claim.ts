import { InvalidArgumentError } from '../errors';
import { replayWindow, type ScriptContext } from './context';
import { SCRIPT_BATCH_MAX } from './limits';
import { runScript } from './run-script';

export interface ClaimedJobRecord {
  readonly id: string;
  readonly attempt: number;
  readonly claimant: string;
  readonly data: string;
  readonly name: string;
  readonly maxAttempts: number;
  /** attempts at the start of the current retry budget */
  readonly budgetBase: number;
}

export interface ClaimBatch {
  readonly jobs: ClaimedJobRecord[];
  /** Lease deadline of every job in this batch (server clock, ms). */
  readonly leaseDeadline: number;
  /** Soonest run-at in schedule after this call, or null when schedule is empty. */
  readonly nextRunAt: number | null;
}

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
}

const FIELDS_PER_JOB = 7;

export async function claimJobs(ctx: ScriptContext, request: ClaimRequest): Promise<ClaimBatch> {
  const { keys } = ctx;
  if (!Number.isSafeInteger(request.count) || request.count < 1 || request.count > SCRIPT_BATCH_MAX) {
    throw new InvalidArgumentError(
      `A claim takes 1 to ${SCRIPT_BATCH_MAX} jobs per call, got ${request.count}`,
    );
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
    ],
  )) as (string | number | null)[];
  return parseClaimReply(reply);
}

export function parseClaimReply(reply: (string | number | null)[]): ClaimBatch {
  const nextRunAt = Number(reply[0]);
  const jobs: ClaimedJobRecord[] = [];
  for (let i = 2; i < reply.length; i += FIELDS_PER_JOB) {
    jobs.push({
      id: String(reply[i]),
      attempt: Number(reply[i + 1]),
      claimant: String(reply[i + 2]),
      data: reply[i + 3] === null ? 'null' : String(reply[i + 3]),
      name: reply[i + 4] === null ? '' : String(reply[i + 4]),
      maxAttempts: Number(reply[i + 5] ?? 1),
      budgetBase: Number(reply[i + 6] ?? 0),
    });
  }
  return { jobs, leaseDeadline: Number(reply[1]), nextRunAt: nextRunAt < 0 ? null : nextRunAt };
}
