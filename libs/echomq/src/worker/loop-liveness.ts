import type { Logger } from '@nestjs/common';
import { monotonicMs } from '../monotonic';

/**
 * What a claim loop is doing now. Each step but two has a bound it must end by, set by the
 * loop's own deadlines (the command deadline, the replay window, a wait's timeout):
 * - starting: the cancels stream's position is taken (one command);
 * - claiming: one claim with its repeats (and, with durable writes, its confirmation);
 * - waiting for work: blocked on the wake list, until an enqueue or the next run-at;
 * - rate-limited: sleeping off a rate limit or a hold;
 * - backing off: after a failed claim;
 * - waiting for a slot: every slot is taken by a running handler (no bound: a handler runs as
 *   long as it runs, since timeoutMs is off by default; a hung handler shows as the age of the
 *   loop's oldest handler instead, see JobSlots.handlerAges);
 * - waiting for isolation: a job that may have crashed its last worker runs alone in the
 *   process, so the loop waits for it (bounded when the gate says until when).
 */
export type LoopStep =
  | 'starting'
  | 'claiming'
  | 'waiting for work'
  | 'rate-limited'
  | 'backing off'
  | 'waiting for a slot'
  | 'waiting for isolation';

export interface LoopStepView {
  readonly step: LoopStep;
  /** How long the step has run so far (ms, this process's monotonic clock). */
  readonly forMs: number;
  /** How long it may run at most, by the loop's own deadlines; null for a step with no bound. */
  readonly boundMs: number | null;
}

/** What the health indicator reads of a loop's liveness. */
export interface LoopLivenessView {
  /** The step the loop is in now; undefined when it is not claiming (never started, or stopped). */
  view(): LoopStepView | undefined;
  /** Why the loop ended although it should still claim (an error escaped it), if it did. */
  readonly endedBy: string | undefined;
}

/**
 * One claim loop's liveness record: the step it is in, since when, and the bound that step
 * must end by. A loop whose step overran its bound is stuck (a defect, or an event loop
 * blocked far longer than any deadline), which an idle loop never is: its wait is bounded
 * and starts again. Read by the health indicator; the loop writes it at each step.
 */
export class LoopLiveness implements LoopLivenessView {
  private current: { step: LoopStep; since: number; boundMs: number | null } | undefined;
  private endedWith?: string;
  private readonly endedListeners: ((reason: string) => void)[] = [];

  enter(step: LoopStep, boundMs: number | null): void {
    this.current = { step, since: monotonicMs(), boundMs };
  }

  /**
   * Follows one run of the loop. Every wait and call in it is bounded and caught, so an error
   * that still escapes is a defect: it ends this loop only, is logged as an error, is kept for
   * the health indicator, and is told to the onEnded listeners (the explorer's loop-ended ones: the
   * worker host exits on it so its supervisor restarts it), instead of an unhandled rejection.
   */
  follow(run: Promise<void>, logger: Logger, queue: string): Promise<void> {
    // Not the step: run() entered its first one before it was handed over.
    this.endedWith = undefined;
    return run.catch((error: unknown) => {
      const reason = error instanceof Error ? error.message : String(error);
      this.current = undefined;
      this.endedWith = reason;
      logger.error(`The claim loop of ${queue} ended: ${reason}; nothing is claimed from it here`);
      for (const listener of this.endedListeners) {
        try {
          listener(reason);
        } catch (thrown) {
          logger.error(`A loop-ended listener of ${queue} threw: ${(thrown as Error).message}`);
        }
      }
    });
  }

  /** Calls `listener` with the reason each time an error ends a followed run (see follow). */
  onEnded(listener: (reason: string) => void): void {
    this.endedListeners.push(listener);
  }

  /** The loop stopped (stopClaiming, shutdown): no step any more. */
  cleared(): void {
    this.current = undefined;
    this.endedWith = undefined;
  }

  get endedBy(): string | undefined {
    return this.endedWith;
  }

  view(): LoopStepView | undefined {
    const current = this.current;
    if (!current) return undefined;
    return { step: current.step, forMs: monotonicMs() - current.since, boundMs: current.boundMs };
  }
}

/**
 * How far past its timeout a blocked read may run before its connection's watchdog gives up
 * on it (BlockingConnection's grace): the bound of a wait on the wake list.
 */
const BLOCKED_READ_GRACE_MS = 2_000;
/**
 * How long a script refused while its cluster slot migrates is repeated before it fails, with
 * its last back-off (runScript's MIGRATION_WAIT_MS and MIGRATION_BACKOFF_MAX_MS).
 */
const SLOT_MIGRATION_WAIT_MS = 30_500;
/**
 * The command deadlines one try of a script call can take (DeadlineRedis): held while the
 * connection is down (one), sent on reconnect with a fresh deadline (two), and after a
 * restarted Redis answered NOSCRIPT, the EVAL that follows (three).
 */
export const COMMAND_DEADLINES_PER_TRY = 3;

/** The bounds of a claim loop's steps, from its deadlines. */
export class StepBounds {
  /**
   * One claim: its last repeat starts within repeatForMs, and one try is a script call of up to
   * three command deadlines (an EVALSHA sent while the connection is down is held up to one
   * deadline, then sent on reconnect with a fresh one, and after a restart's NOSCRIPT the EVAL
   * has its own; on a cluster, repeated while the slot migrates), plus, with durable writes, the
   * confirmation (given up at half the lease) and the release of an unconfirmed claim
   * (repeated until the lease ends).
   */
  readonly claimMs: number;
  /**
   * Taking the cancels stream's position: one XREVRANGE (held while disconnected, then sent with
   * a fresh deadline), maybe behind one in flight, and a blocked read's grace.
   */
  readonly startMs: number;

  constructor(
    timing: { readonly repeatForMs: number; readonly commandTimeoutMs: number },
    where: { readonly cluster: boolean; readonly durableLeaseMs?: number },
  ) {
    const { repeatForMs, commandTimeoutMs } = timing;
    const tryMs = COMMAND_DEADLINES_PER_TRY * commandTimeoutMs + (where.cluster ? SLOT_MIGRATION_WAIT_MS : 0);
    const confirmMs = where.durableLeaseMs === undefined ? 0 : where.durableLeaseMs + tryMs;
    this.claimMs = repeatForMs + tryMs + confirmMs;
    this.startMs = COMMAND_DEADLINES_PER_TRY * commandTimeoutMs + BLOCKED_READ_GRACE_MS;
  }

  /** A wait on the wake list of `timeoutMs`: its watchdog ends it by then plus its grace. */
  waitMs(timeoutMs: number): number {
    return timeoutMs + BLOCKED_READ_GRACE_MS;
  }
}
