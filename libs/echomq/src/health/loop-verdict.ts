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
}

export interface LoopVerdict {
  readonly loops: Record<string, LoopDetail>;
  /** What is wrong, one sentence per loop; empty when every loop is well. */
  readonly problems: string[];
}

function seconds(ms: number): string {
  return `${(ms / 1_000).toFixed(1)} s`;
}

/**
 * The claim loops' share of health. A loop is unwell when it should be claiming and is not
 * (it ended on an error, its queue was refused, or it still waits for its registration), or
 * when it is stuck: its current step has run longer than that step's own bound plus `marginMs`.
 * A loop that waits, for work or for a slot while its handlers run, is well: every wait is
 * bounded and starts again, and a slot's wait has no bound of its own.
 */
export function judgeLoops(reports: readonly ClaimLoopReport[], marginMs: number): LoopVerdict {
  const loops: Record<string, LoopDetail> = {};
  const problems: string[] = [];
  for (const report of reports) {
    const { queue, state, step, reason } = report;
    if (state === 'ended') problems.push(`the claim loop of ${queue} ended: ${reason}`);
    if (state === 'refused') problems.push(`queue ${queue} is not served: ${reason}`);
    if (state === 'registering') problems.push(`queue ${queue} is not served yet: it waits to be registered`);
    if (!step) {
      loops[queue] = reason === undefined ? { state } : { state, reason };
      continue;
    }
    const forMs = Math.round(step.forMs);
    const stuck = step.boundMs !== null && step.forMs > step.boundMs + marginMs;
    loops[queue] = { state: stuck ? 'stuck' : state, step: step.step, forMs, boundMs: step.boundMs };
    if (stuck) {
      problems.push(
        `the claim loop of ${queue} is stuck: ${step.step} for ${seconds(step.forMs)}, ` +
          `past its bound of ${seconds(step.boundMs ?? 0)}`,
      );
    }
  }
  return { loops, problems };
}
