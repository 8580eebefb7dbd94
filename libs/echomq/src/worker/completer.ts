import { Coalescer } from '../batching/coalescer';
import type { Completion } from '../scripts';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { repeatUntilKnown } from '../scripts/repeat';
import { newRequestId } from '../scripts/request-id';
import { monotonicMs } from '../monotonic';

/** Sends one batch of completions under one request id: per completion, true when completed, false when stale. */
export type CompletionSend = (completions: Completion[], requestId: string) => Promise<boolean[]>;

export interface CompleterOptions {
  /** How long after its first send a call may still be repeated under its request id (see ClaimLoopTiming). */
  readonly repeatForMs: number;
  /** Most completions per script call; at most SCRIPT_BATCH_MAX (the default). */
  readonly maxBatch?: number;
  readonly onRepeat?: (error: Error, attempt: number) => void;
}

const firstOf = (results: boolean[]): boolean => results[0];

interface Request {
  readonly completion: Completion;
  /** Local clock after which repeating this job's completion is pointless: its local lease end. */
  readonly untilMs: number;
}

/**
 * Batches one claim loop's completions (see Coalescer): a job that finishes while
 * others' completions are on the wire leaves with the next batch, so under load one
 * script call completes many jobs, and an idle loop completes a job at once.
 *
 * A batch whose outcome is unknown (a lost reply, a missed deadline, Redis away) is
 * repeated as the same batch under the same request id, so a repeat of a call that
 * already took effect returns its recorded outcome instead of STALE. Repeats stop at the
 * earliest local lease end among its jobs, at the end of the replay window, or at the
 * shutdown deadline; then every job of the batch gets the transient error (its outcome
 * stays unknown, and the runner must not send it again under a new id).
 */
export class Completer {
  private readonly coalescer: Coalescer<Request, boolean>;
  private stopAtMs = Infinity;

  constructor(
    private readonly send: CompletionSend,
    private readonly options: CompleterOptions,
  ) {
    this.coalescer = new Coalescer((requests) => this.sendBatch(requests), {
      maxBatch: Math.min(SCRIPT_BATCH_MAX, options.maxBatch ?? SCRIPT_BATCH_MAX),
      maxInFlight: 2,
      size: () => 1,
    });
  }

  /** Resolves true when completed, false when the claim was stale (nothing changed). */
  complete(completion: Completion, untilMs: number): Promise<boolean> {
    // (then() rather than an async function: one per job, and each async layer costs a frame)
    return this.coalescer.submit({ completion, untilMs }).then(firstOf);
  }

  /** At shutdown: no batch is repeated after this local time (a call in flight still gets its answer). */
  stopRepeatingAt(ms: number): void {
    this.stopAtMs = Math.min(this.stopAtMs, ms);
  }

  private async sendBatch(requests: Request[]): Promise<boolean[][]> {
    const completions: Completion[] = [];
    let untilMs = monotonicMs() + this.options.repeatForMs;
    for (const request of requests) {
      completions.push(request.completion);
      // the earliest local lease end of the batch
      if (request.untilMs < untilMs) untilMs = request.untilMs;
    }
    const requestId = newRequestId();
    const completed = await repeatUntilKnown(() => this.send(completions, requestId), {
      untilMs,
      onRepeat: this.options.onRepeat,
      stopped: () => monotonicMs() >= this.stopAtMs,
    });
    return completed.map((flag) => [flag]);
  }
}
