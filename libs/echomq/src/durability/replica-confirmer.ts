import type { ChainableCommander } from 'ioredis';
import { Coalescer } from '../batching/coalescer';
import { BlockingConnection } from '../connection/blocking-connection';
import type { RedisConnections } from '../connection/redis-connections';
import { OutcomeUnknownError, RedisUnavailableError } from '../errors';
import { monotonicMs } from '../monotonic';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { confirmationRefusal } from './command-refusal';
import { untilBound, type ConfirmBound } from './confirm-bound';

export type { ConfirmBound } from './confirm-bound';

/** Appends exactly one write command to the confirmation pipeline. */
export type ConfirmWrite = (pipeline: ChainableCommander) => void;

/** What a confirmation found: the write's own reply, and how many replicas have everything up to it. */
export interface Confirmation {
  readonly reply: unknown;
  readonly acknowledged: number;
}

/** How durable writes are confirmed: by this many replicas, waiting at most this long. */
export interface ReplicaWait {
  readonly replicas: number;
  readonly timeoutMs: number;
  /**
   * The deadline of one command on this application's connections: what a claim being given
   * back at shutdown may still take (its release is repeated no longer past the stop).
   */
  readonly commandTimeoutMs: number;
  /**
   * `bound` caps how long this caller waits (see ConfirmBound); without one it waits the
   * confirmation out (timeoutMs, plus the watchdog's grace).
   */
  confirm(write: ConfirmWrite, bound?: ConfirmBound): Promise<Confirmation>;
  /**
   * Drops the confirmation connection; the next confirmation opens a fresh one (through the
   * sentinels, the current master). For a write not found on the master this connection
   * reaches, which may be an old master not yet demoted.
   */
  reconnect(): void;
}

/**
 * The confirmer was closed (the application is shutting down) before or while it confirmed:
 * no confirmation will ever come from it. A RedisUnavailableError, so a caller that only asks
 * whether its command went out (the node lease) treats it as it treats an unreachable Redis;
 * the durable-write paths look for it first and stop asking.
 */
export class ConfirmerClosedError extends RedisUnavailableError {
  constructor() {
    super('the replica confirmation connection (closed: the application is shutting down)', 0);
  }
}

interface ConfirmRequest {
  readonly write: ConfirmWrite;
  readonly bound: ConfirmBound;
}

type PipelineReply = [Error | null, unknown][] | null;

/**
 * Confirms writes with Redis WAIT, on a connection of its own.
 *
 * WAIT counts the replicas that acknowledged the calling connection's last write, so it proves
 * nothing on a connection that wrote nothing since it connected (it returns at once). A write
 * that another connection made, or that a replay answered without writing, is therefore
 * confirmed by sending a small write that always propagates and names it (PEXPIRE on the
 * call's reply record, a compare-and-expire on a lease key) followed by WAIT, in one pipeline
 * on one socket: the small write is placed in the master's replication stream after
 * everything the master had applied, the script included, and WAIT then waits for it. Its
 * reply says whether the write is on this master at all (a record that a failover lost is
 * not there).
 *
 * Why its own connection: WAIT blocks the connection that sends it for up to timeoutMs, and on
 * the shared command connection every heartbeat and completion would queue behind it. The
 * confirmations of concurrent callers share one pipeline and one WAIT (see Coalescer): the
 * WAIT covers every write before it. It waits as long as its longest-waiting caller may
 * (timeoutMs, or less when every caller has a cut-off: a claim's half lease).
 */
export class ReplicaConfirmer implements ReplicaWait {
  private readonly connection: BlockingConnection;
  private readonly coalescer: Coalescer<ConfirmRequest, Confirmation>;
  private closed = false;
  readonly commandTimeoutMs: number;

  /** The Redis confirmations go to, as errors name it (never with credentials). */
  private readonly target: string;

  constructor(
    connections: RedisConnections,
    readonly replicas: number,
    readonly timeoutMs: number,
  ) {
    this.connection = new BlockingConnection(connections);
    this.target = connections.reachability.target;
    this.commandTimeoutMs = connections.commandTimeoutMs;
    this.coalescer = new Coalescer((requests) => this.send(requests), {
      maxBatch: SCRIPT_BATCH_MAX,
      // One connection: its WAITs run one after the other anyway.
      maxInFlight: 1,
      size: () => 1,
    });
    connections.beforeClose(() => this.close());
  }

  /**
   * Sends `write` then WAIT (shared with the writes of concurrent callers). Rejects with the
   * write's own error, or with OutcomeUnknownError / RedisUnavailableError when the pipeline
   * got no answer (or `bound` ended the wait first): nothing is then known about the replicas.
   * A user that may not run WAIT or the small write (an ACL without `+wait`) gets
   * RedisCommandRefusedError at once: asking again cannot change that answer, and counting it
   * as "0 replicas" would blame the replicas. A closed confirmer rejects with
   * ConfirmerClosedError, also a confirmation its closing cut.
   */
  async confirm(write: ConfirmWrite, bound: ConfirmBound = {}): Promise<Confirmation> {
    if (this.closed) throw new ConfirmerClosedError();
    if (bound.untilMs === undefined && bound.signal === undefined) {
      const [confirmation] = await this.coalescer.submit({ write, bound });
      return confirmation;
    }
    return untilBound(
      () => this.coalescer.submit({ write, bound }).then(([confirmation]) => confirmation),
      bound,
    );
  }

  private async send(requests: ConfirmRequest[]): Promise<(Confirmation[] | Error)[]> {
    // Queued before the close: a new connection now would outlive the application.
    if (this.closed) throw new ConfirmerClosedError();
    const waitMs = this.waitMs(requests);
    // Every caller of this batch stopped waiting while it queued: nobody needs its answer.
    if (waitMs === undefined)
      return requests.map(() => new OutcomeUnknownError('WAIT', 'not sent: nobody waits'));
    let reply: PipelineReply | undefined;
    try {
      reply = await this.connection.run(waitMs, (client) => {
        const pipeline = client.pipeline();
        for (const { write } of requests) write(pipeline);
        pipeline.wait(this.replicas, waitMs);
        return pipeline.exec();
      });
    } catch (error) {
      if (this.closed) throw new ConfirmerClosedError();
      // The connection failed under the pipeline (it is replaced on the next call).
      throw new OutcomeUnknownError('WAIT', (error as Error).message);
    }
    if (this.closed) throw new ConfirmerClosedError();
    if (!reply) throw new OutcomeUnknownError('WAIT', `no reply within ${waitMs} ms and a grace period`);
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
      return refusals[index] ?? error ?? [{ reply: value, acknowledged }];
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

  reconnect(): void {
    this.connection.reset();
  }

  private async close(): Promise<void> {
    this.closed = true;
    this.connection.reset();
  }
}
