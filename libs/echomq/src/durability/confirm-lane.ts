import type { ChainableCommander } from 'ioredis';
import { Coalescer } from '../batching/coalescer';
import type { BlockingConnection } from '../connection/blocking-connection';
import { OutcomeUnknownError } from '../errors';
import { monotonicMs } from '../monotonic';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { confirmationRefusal } from './command-refusal';
import type { ConfirmBound } from './confirm-bound';
import { redirectOf } from './confirm-redirect';

/** The small write a confirmation sends before its WAIT. */
export interface ConfirmWrite {
  /**
   * The one key the write names. On a cluster its slot decides the master the confirmation goes
   * to: the one that holds the write being confirmed (the call's reply record is in its queue's
   * slot, a node lease key in its own).
   */
  readonly key: string;
  /** Appends exactly that one write command to the confirmation pipeline. */
  append(pipeline: ChainableCommander): void;
}

/** What a confirmation found: the write's own reply, and how many replicas have everything up to it. */
export interface Confirmation {
  readonly reply: unknown;
  readonly acknowledged: number;
}

export interface ConfirmRequest {
  readonly write: ConfirmWrite;
  readonly bound: ConfirmBound;
}

type PipelineReply = [Error | null, unknown][] | null;

/**
 * One line of confirmations to one master: its own connection, and one pipeline with one WAIT
 * at a time on it. The confirmations of concurrent callers share that pipeline and its WAIT
 * (see Coalescer): WAIT covers every write before it on the same socket. It waits as long as
 * its longest-waiting caller may (timeoutMs, or less when every caller has a cut-off: a claim's
 * half lease).
 *
 * On a cluster the connection is a plain one to the lane's own master (see ConfirmLanes), so
 * every small write of a pipeline runs on the node whose replicas its WAIT counts, or not at
 * all: a write whose slot that node does not serve (MOVED after a failover or a migration, ASK
 * while its slot is migrated away, CLUSTERDOWN while a replica is promoted) is refused unrun.
 * Such a caller is answered with ConfirmationRedirectedError (nothing was written there, asking
 * again is safe) and never with the WAIT's count, which says nothing about its write.
 */
export class ConfirmLane {
  private readonly coalescer: Coalescer<ConfirmRequest, Confirmation>;
  private waiting = 0;

  constructor(
    private readonly connection: BlockingConnection,
    private readonly replicas: number,
    private readonly timeoutMs: number,
    /** The Redis confirmations go to, as errors name it (never with credentials). */
    private readonly target: string,
    /** The error a call gets once the confirmer is closed (shutdown): checked before and after each send. */
    private readonly closed: () => Error | undefined,
  ) {
    this.coalescer = new Coalescer((requests) => this.send(requests), {
      maxBatch: SCRIPT_BATCH_MAX,
      // One connection: its WAITs run one after the other anyway.
      maxInFlight: 1,
      size: () => 1,
    });
  }

  /** No request is queued or in flight: the lane can be dropped without cutting anyone's confirmation. */
  get idle(): boolean {
    return this.waiting === 0;
  }

  async submit(request: ConfirmRequest): Promise<Confirmation> {
    this.waiting += 1;
    try {
      const [confirmation] = await this.coalescer.submit(request);
      return confirmation;
    } finally {
      this.waiting -= 1;
    }
  }

  /** Drops the connection; the next confirmation opens a fresh one. */
  reset(): void {
    this.connection.reset();
  }

  private async send(requests: ConfirmRequest[]): Promise<(Confirmation[] | Error)[]> {
    // Queued before the close: a new connection now would outlive the application.
    const closedBefore = this.closed();
    if (closedBefore) throw closedBefore;
    const waitMs = this.waitMs(requests);
    // Every caller of this batch stopped waiting while it queued: nobody needs its answer.
    if (waitMs === undefined)
      return requests.map(() => new OutcomeUnknownError('WAIT', 'not sent: nobody waits'));
    let reply: PipelineReply | undefined;
    try {
      reply = await this.connection.run(waitMs, (client) => {
        const pipeline = client.pipeline();
        for (const { write } of requests) write.append(pipeline);
        pipeline.wait(this.replicas, waitMs);
        return pipeline.exec();
      });
    } catch (error) {
      const closed = this.closed();
      if (closed) throw closed;
      // The connection failed under the pipeline (it is replaced on the next call).
      throw new OutcomeUnknownError('WAIT', (error as Error).message);
    }
    const closedAfter = this.closed();
    if (closedAfter) throw closedAfter;
    if (!reply) throw new OutcomeUnknownError('WAIT', `no reply within ${waitMs} ms and a grace period`);
    return this.answers(requests, reply);
  }

  /** Each caller's answer from the pipeline's replies (its own write's, then the shared WAIT's). */
  private answers(
    requests: readonly ConfirmRequest[],
    reply: NonNullable<PipelineReply>,
  ): (Confirmation[] | Error)[] {
    const [waitError, waited] = reply[reply.length - 1];
    // A refused write first: WAIT after it counted nothing of the caller's.
    const refusals = requests.map((_, index) => confirmationRefusal(reply[index][0], this.target));
    const waitRefused = confirmationRefusal(waitError, this.target);
    if (waitRefused) return refusals.map((refusal) => refusal ?? waitRefused);
    if (waitError) {
      // Typically a replica answering (READONLY, "WAIT cannot be used with replica instances"):
      // a connection made while a failover was under way. The next call connects afresh.
      this.connection.reset();
      throw new OutcomeUnknownError('WAIT', waitError.message);
    }
    const acknowledged = Number(waited);
    return requests.map((_, index) => {
      const [error, value] = reply[index];
      return redirectOf(error) ?? refusals[index] ?? error ?? [{ reply: value, acknowledged }];
    });
  }

  /**
   * How long this batch's WAIT waits: as long as its longest-waiting caller still waits, at
   * most timeoutMs; undefined when every caller already stopped waiting. Never 0, which
   * would make WAIT block for ever.
   */
  private waitMs(requests: readonly ConfirmRequest[]): number | undefined {
    const now = monotonicMs();
    let longest: number | undefined;
    for (const { bound } of requests) {
      if (bound.signal?.aborted) continue;
      const left = bound.untilMs === undefined ? this.timeoutMs : bound.untilMs - now;
      if (left > 0) longest = Math.max(longest ?? 0, left);
    }
    return longest === undefined ? undefined : Math.max(1, Math.min(this.timeoutMs, Math.ceil(longest)));
  }
}
