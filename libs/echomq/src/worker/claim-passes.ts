import type { Logger } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DurableScriptContext } from '../durability/durable-context';
import type { ResolvedQueueOptions } from '../queue/queue-options';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import type { ChangeSignal } from './change-signal';
import { ClaimFailures } from './claim-failures';
import { pauseAfter } from './claim-pause';
import { claimAndLaunch } from './isolated-claim';
import type { IsolationGate, IsolationMember } from './isolation-gate';
import type { JobSlots } from './job-slots';
import type { LoopLiveness, StepBounds } from './loop-liveness';
import type { RuntimeObserver } from './runtime-observer';
import type { SlotBudget } from './shared-slots';
import type { WakeWaiter } from './wake-waiter';

/** What one run of a claim loop works with: the loop's parts, and this run's stop signal. */
export interface ClaimRun {
  readonly ctx: DurableScriptContext;
  readonly queue: string;
  readonly options: ResolvedQueueOptions;
  readonly logger: Logger;
  readonly slots: JobSlots;
  /** How many jobs the loop may claim now: its queue's concurrency, shared with its other partitions. */
  readonly budget: SlotBudget;
  readonly changes: ChangeSignal;
  readonly gate: IsolationGate;
  readonly member: IsolationMember;
  readonly waiter: WakeWaiter;
  readonly observer: RuntimeObserver;
  /** How long after its first send a claim may be repeated (ClaimLoopTiming.repeatForMs). */
  readonly repeatForMs: number;
  readonly liveness: LoopLiveness;
  readonly bounds: StepBounds;
  /** Aborted when this run is to stop claiming. */
  readonly stopped: AbortSignal;
}

/**
 * The passes of one run of a claim loop, until it is stopped. Each pass waits for a free slot,
 * or for its turn in the IsolationGate, or claims up to its free slots (at most
 * SCRIPT_BATCH_MAX) and launches them, then, if the claim did not fill them, sleeps off a rate
 * limit or blocks on the wake list (see pauseAfter); failed claims in a row are backed off from
 * (see ClaimFailures; each run starts from the first backoff). Each step is recorded with its
 * bound in `liveness`, for the health indicator. The free slots are the budget's: the loops of
 * a partitioned queue share one (SharedSlots), so a loop tells it when it rests and when its
 * claims fail, and its claim holds the slots it asked for until it is back.
 */
export async function runClaimPasses(run: ClaimRun): Promise<void> {
  const { budget, gate, member, liveness, bounds, stopped } = run;
  const failures = new ClaimFailures(run.logger, run.queue);
  while (!stopped.aborted) {
    const free = budget.free();
    if (free <= 0) {
      liveness.enter('waiting for a slot', null);
      await budget.changed();
      continue;
    }
    const turn = gate.turn(member);
    if (!turn.claim) {
      liveness.enter('waiting for isolation', turn.recheckMs ?? null);
      await gate.changes.changed(turn.recheckMs);
      continue;
    }
    const count = Math.min(free, SCRIPT_BATCH_MAX);
    try {
      liveness.enter('claiming', bounds.claimMs);
      budget.reserve(count);
      const batch = await claimAndLaunch(run, count, turn).finally(() => budget.release(count));
      failures.cleared();
      budget.claimSucceeded();
      const pause = pauseAfter(batch, count);
      // A loop waiting to run a crash suspect alone waits in the gate, not on the wake list.
      if (!pause || stopped.aborted || (gate.isolating(member) && pause.until === 'wake')) continue;
      budget.park();
      // A limit is not lifted by an enqueue: sleep it off the wake list, until stop.
      if (pause.until === 'limit') {
        liveness.enter('rate-limited', pause.ms);
        await sleep(pause.ms, undefined, { signal: stopped }).catch(() => undefined);
      } else {
        liveness.enter('waiting for work', bounds.waitMs(pause.ms));
        await run.waiter.wait(pause.ms);
      }
    } catch (error) {
      if (stopped.aborted) break;
      const backoffMs = failures.failed(error);
      // Until a claim goes through, one slot at a time (see SharedSlots).
      budget.claimFailed();
      budget.park();
      liveness.enter('backing off', backoffMs);
      await run.changes.changed(backoffMs);
    }
  }
}
