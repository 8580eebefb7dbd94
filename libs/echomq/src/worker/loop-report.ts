import type { ClaimLoop } from './claim-loop';
import type { HandlerAges } from './job-slots';
import type { LoopStepView } from './loop-liveness';

/**
 * One processor's claim loop as the health indicator sees it:
 * - claiming: the loop runs (`step` says what it does now);
 * - stopped: not claiming, and not meant to (startProcessors: false, stopQueue, shutdown);
 * - ended: an error escaped the loop while it should have claimed (`reason`);
 * - registering: Redis was unreachable at boot, and the loop starts once the queue is registered;
 * - refused: Redis says this worker must not serve the queue (e.g. a newer data format; `reason`).
 */
export type LoopState = 'claiming' | 'stopped' | 'ended' | 'registering' | 'refused';

export interface ClaimLoopReport {
  readonly queue: string;
  readonly state: LoopState;
  /** Whether the loop should be claiming now: every state but `stopped`. */
  readonly expected: boolean;
  /** While claiming: the step it is in, for how long, and that step's bound. */
  readonly step?: LoopStepView;
  /** Why it ended, or why it was refused. */
  readonly reason?: string;
  /** Its handlers running now (those past their timeout included) and the oldest one's age. */
  readonly handlers: HandlerAges;
}

/** What the explorer knows of a served queue's registration (see ServedQueues). */
export interface Serving {
  readonly refused?: string;
  readonly registering: boolean;
}

/** The report of one loop, given what the explorer knows of its queue's registration. */
export function reportLoop(queue: string, loop: ClaimLoop, serving: Serving): ClaimLoopReport {
  const handlers = loop.handlerAges;
  if (serving.refused !== undefined)
    return { queue, state: 'refused', expected: true, reason: serving.refused, handlers };
  if (serving.registering) return { queue, state: 'registering', expected: true, handlers };
  if (!loop.claiming) return { queue, state: 'stopped', expected: false, handlers };
  const ended = loop.health.endedBy;
  if (ended !== undefined) return { queue, state: 'ended', expected: true, reason: ended, handlers };
  return { queue, state: 'claiming', expected: true, step: loop.health.view(), handlers };
}

/** A claim loop that an error ended (see ProcessorExplorer.onLoopEnded). */
export interface LoopEnded {
  readonly queue: string;
  /** The error's message. */
  readonly reason: string;
}
