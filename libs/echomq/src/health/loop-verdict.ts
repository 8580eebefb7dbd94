import type { ClaimLoopReport, LoopState } from '../worker/loop-report';
import type { LoopStep } from '../worker/loop-liveness';

/** One claim loop in the indicator's details. */
export interface LoopDetail {
  readonly state: LoopState | 'stuck';
  /** While claiming: what it does now, for how long (ms), and the bound that step must end by (ms; null: none). */
  readonly step?: LoopStep;
  readonly forMs?: number;
  readonly boundMs?: number | null;
  /** Why it ended or was refused. */
  readonly reason?: string;
  /** Its handlers running now, those past their timeout included. */
  readonly handlersRunning: number;
  /** How long the oldest of them has run (ms); null when none runs. */
  readonly oldestHandlerMs: number | null;
}

/** How the loops are judged (see EchoMqHealthOptions). */
export interface LoopJudgement {
  /** How far past its bound a step may run before the loop is stuck. */
  readonly marginMs: number;
  /** A loop with a handler running longer than this is unwell; undefined: handlers are not judged. */
  readonly maxHandlerMs?: number;
  /**
   * Whether what depends on Redis counts: a queue waiting for its registration (Redis was down
   * at boot). Off for a liveness check, which must not fail for as long as Redis is away.
   */
  readonly redis: boolean;
}

export interface LoopVerdict {
  readonly loops: Record<string, LoopDetail>;
  /** What is wrong, one sentence per problem; empty when every loop is well. */
  readonly problems: string[];
}

function seconds(ms: number): string {
  return `${(ms / 1_000).toFixed(1)} s`;
}

/**
 * The claim loops' share of health. A loop is unwell when it should be claiming and is not
 * (it ended on an error, its queue was refused, or, when Redis counts, it still waits for its
 * registration), when it is stuck (its current step has run longer than that step's own bound
 * plus `marginMs`), or when one of its handlers has run longer than `maxHandlerMs`. A loop
 * that waits, for work or for a slot while its handlers run, is otherwise well: every wait is
 * bounded and starts again, and a slot's wait lasts as long as the handlers do (hence
 * maxHandlerMs for handlers that never return).
 */
export function judgeLoops(reports: readonly ClaimLoopReport[], judgement: LoopJudgement): LoopVerdict {
  const loops: Record<string, LoopDetail> = {};
  const problems: string[] = [];
  for (const report of reports) {
    const { queue, state, step, reason } = report;
    if (state === 'ended') problems.push(`the claim loop of ${queue} ended: ${reason}`);
    if (state === 'refused') problems.push(`queue ${queue} is not served: ${reason}`);
    if (state === 'registering' && judgement.redis) {
      problems.push(`queue ${queue} is not served yet: it waits to be registered`);
    }
    const { running, oldestMs } = report.handlers;
    const handlers = {
      handlersRunning: running,
      oldestHandlerMs: oldestMs === null ? null : Math.round(oldestMs),
    };
    const { maxHandlerMs } = judgement;
    if (maxHandlerMs !== undefined && oldestMs !== null && oldestMs > maxHandlerMs) {
      problems.push(
        `the claim loop of ${queue} has a handler running for ${seconds(oldestMs)}, ` +
          `past maxHandlerMs (${seconds(maxHandlerMs)})`,
      );
    }
    if (!step) {
      loops[queue] = reason === undefined ? { state, ...handlers } : { state, reason, ...handlers };
      continue;
    }
    const forMs = Math.round(step.forMs);
    const stuck = step.boundMs !== null && step.forMs > step.boundMs + judgement.marginMs;
    loops[queue] = {
      state: stuck ? 'stuck' : state,
      step: step.step,
      forMs,
      boundMs: step.boundMs,
      ...handlers,
    };
    if (stuck) {
      problems.push(
        `the claim loop of ${queue} is stuck: ${step.step} for ${seconds(step.forMs)}, ` +
          `past its bound of ${seconds(step.boundMs ?? 0)}`,
      );
    }
  }
  return { loops, problems };
}
