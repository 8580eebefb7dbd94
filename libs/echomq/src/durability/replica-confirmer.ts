import type { ChainableCommander } from 'ioredis';
import { Coalescer } from '../batching/coalescer';
import { BlockingConnection } from '../connection/blocking-connection';
import type { RedisConnections } from '../connection/redis-connections';
import { OutcomeUnknownError, RedisUnavailableError } from '../errors';
import { SCRIPT_BATCH_MAX } from '../scripts/limits';
import { confirmationRefusal } from './command-refusal';

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
  confirm(write: ConfirmWrite): Promise<Confirmation>;
  /**
   * Drops the confirmation connection; the next confirmation opens a fresh one (through the
   * sentinels, the current master). For a write not found on the master this connection
   * reaches, which may be an old master not yet demoted.
   */
  reconnect(): void;
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
 * WAIT covers every write before it.
 */
export class ReplicaConfirmer implements ReplicaWait {
  private readonly connection: BlockingConnection;
  private readonly coalescer: Coalescer<ConfirmWrite, Confirmation>;
  private closed = false;

  /** The Redis confirmations go to, as errors name it (never with credentials). */
  private readonly target: string;

  constructor(
    connections: RedisConnections,
    readonly replicas: number,
    readonly timeoutMs: number,
  ) {
    this.connection = new BlockingConnection(connections);
    this.target = connections.reachability.target;
    this.coalescer = new Coalescer((writes) => this.send(writes), {
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
   * got no answer: nothing is then known about the replicas. A user that may not run WAIT or
   * the small write (an ACL without `+wait`) gets RedisCommandRefusedError at once: asking
   * again cannot change that answer, and counting it as "0 replicas" would blame the replicas.
   */
  async confirm(write: ConfirmWrite): Promise<Confirmation> {
    if (this.closed) throw new RedisUnavailableError('the replica confirmation connection (closed)', 0);
    const [confirmation] = await this.coalescer.submit(write);
    return confirmation;
  }

  private async send(writes: ConfirmWrite[]): Promise<(Confirmation[] | Error)[]> {
    let reply: PipelineReply | undefined;
    try {
      reply = await this.connection.run(this.timeoutMs, (client) => {
        const pipeline = client.pipeline();
        for (const write of writes) write(pipeline);
        pipeline.wait(this.replicas, this.timeoutMs);
        return pipeline.exec();
      });
    } catch (error) {
      // The connection failed under the pipeline (it is replaced on the next call).
      throw new OutcomeUnknownError('WAIT', (error as Error).message);
    }
    if (!reply)
      throw new OutcomeUnknownError('WAIT', `no reply within ${this.timeoutMs} ms and a grace period`);
    const [waitError, waited] = reply[reply.length - 1];
    // A refused write first: WAIT after it counted nothing of the caller's.
    const refusals = writes.map((_, index) => confirmationRefusal(reply[index][0], this.target));
    const waitRefused = confirmationRefusal(waitError, this.target);
    if (waitRefused) return refusals.map((refusal) => refusal ?? waitRefused);
    if (waitError) {
      // Typically a replica answering (READONLY, "WAIT cannot be used with replica instances"):
      // a connection made while a failover was under way. The next call connects afresh.
      this.connection.reset();
      throw new OutcomeUnknownError('WAIT', waitError.message);
    }
    const acknowledged = Number(waited);
    return writes.map((_, index) => {
      const [error, value] = reply[index];
      return refusals[index] ?? error ?? [{ reply: value, acknowledged }];
    });
  }

  reconnect(): void {
    this.connection.reset();
  }

  private async close(): Promise<void> {
    this.closed = true;
    this.connection.reset();
  }
}
