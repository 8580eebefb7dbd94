import type { Logger } from '@nestjs/common';
import type { DurableScriptContext } from '../durability/durable-context';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import type { ClaimBatch } from '../scripts';
import { claimWithRepeat } from './claim-call';
import type { ClaimedOutcome, ClaimTurn, IsolationGate, IsolationMember } from './isolation-gate';
import type { JobSlots } from './job-slots';
import { RunningJob } from './running-job';
import type { RuntimeObserver } from './runtime-observer';

/** What one claim loop lends a claim: where it claims from, and where the jobs go. */
export interface IsolatedClaimLoop {
  readonly ctx: DurableScriptContext;
  readonly queue: string;
  readonly options: ResolvedQueueOptions;
  /** How long after its first send the claim may be repeated (ClaimLoopTiming.repeatForMs). */
  readonly repeatForMs: number;
  /** Aborted when the loop stops claiming. */
  readonly stopped: AbortSignal;
  readonly logger: Logger;
  readonly slots: JobSlots;
  readonly gate: IsolationGate;
  readonly member: IsolationMember;
  /** Told of each claim (see claimWithRepeat). */
  readonly observer: RuntimeObserver;
}

/**
 * One claim of up to `count` jobs (see claimWithRepeat), handing out crash suspects as the
 * gate's turn says, each job launched as it arrives. The gate hears what came (a suspect
 * taken, or one met and left) in the same tick as the launches, so no other loop of the
 * process sees it empty in between, and a failed claim is told too.
 */
export async function claimAndLaunch(
  loop: IsolatedClaimLoop,
  count: number,
  turn: ClaimTurn & { readonly claim: true },
): Promise<ClaimBatch> {
  // maxAttempts: the budget of claimed jobs that have none of their own (recorded on their rows).
  const { leaseMs, maxAttempts, timeoutMs } = loop.options;
  let outcome: ClaimedOutcome | undefined;
  loop.gate.claiming(turn);
  try {
    const { batch, sentAt } = await claimWithRepeat(
      loop.ctx,
      { count, leaseMs, maxAttempts, suspects: turn.suspects },
      {
        queue: loop.queue,
        repeatForMs: loop.repeatForMs,
        stopped: loop.stopped,
        logger: loop.logger,
        observer: loop.observer,
      },
    );
    let suspect: Promise<void> | undefined;
    // Their leases count from the first send, the earliest the claim can have run.
    for (const record of batch.jobs) {
      const settled = loop.slots.launch(
        new RunningJob(record, sentAt, leaseMs, record.timeoutMs ?? timeoutMs),
      );
      if (!record.suspect) continue;
      suspect = settled;
      loop.logger.log(
        `Job ${record.id} (attempt ${record.attempt}) runs alone in this process: its last lease ran out, ` +
          'so it may have crashed its worker',
      );
    }
    outcome = { suspectAhead: batch.suspectAhead, short: batch.jobs.length < count, suspect };
    return batch;
  } finally {
    loop.gate.claimed(loop.member, turn, outcome);
  }
}
