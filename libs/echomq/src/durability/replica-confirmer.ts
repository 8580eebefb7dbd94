import type { RedisConnections } from '../connection/redis-connections';
import { RedisUnavailableError } from '../errors';
import { untilBound, type ConfirmBound } from './confirm-bound';
import { ConfirmLane, type Confirmation, type ConfirmWrite } from './confirm-lane';
import { ConfirmLanes } from './confirm-lanes';

export type { ConfirmBound } from './confirm-bound';
export type { Confirmation, ConfirmWrite } from './confirm-lane';

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
   * Sends `write` then WAIT on the master that holds `write.key`. `bound` caps how long this
   * caller waits (see ConfirmBound); without one it waits the confirmation out (timeoutMs, plus
   * the watchdog's grace).
   */
  confirm(write: ConfirmWrite, bound?: ConfirmBound): Promise<Confirmation>;
  /**
   * Drops the confirmation connection of `key`'s master; the next confirmation opens a fresh
   * one (through the sentinels, the current master; on a cluster, to the master the command
   * client's map names then). For a write not found on the master this connection reaches,
   * which may be an old master not yet demoted.
   */
  reconnect(key: string): void;
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

/**
 * Confirms writes with Redis WAIT, on connections of its own.
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
 * Why connections of its own: WAIT blocks the connection that sends it for up to timeoutMs, and
 * on the shared command connection every heartbeat and completion would queue behind it.
 * Confirmations go out per master (see ConfirmLanes: one lane, or on a cluster one per master),
 * each lane merging its concurrent callers into one pipeline and one WAIT (see ConfirmLane).
 * A user that may not run WAIT or the small write (an ACL without `+wait`) gets
 * RedisCommandRefusedError at once: asking again cannot change that answer, and counting it as
 * "0 replicas" would blame the replicas. Otherwise a confirmation rejects with the write's own
 * error, or with OutcomeUnknownError / RedisUnavailableError when nothing is known about the
 * replicas (the pipeline got no answer, `bound` ended the wait first), or with
 * ConfirmationRedirectedError when a cluster did not run the write where it was sent (a
 * RedisUnavailableError: its slot moved or is moving; asked again). A closed confirmer rejects
 * with ConfirmerClosedError, also a confirmation its closing cut.
 */
export class ReplicaConfirmer implements ReplicaWait {
  private readonly lanes: ConfirmLanes;
  private closed = false;
  readonly commandTimeoutMs: number;

  constructor(
    connections: RedisConnections,
    readonly replicas: number,
    readonly timeoutMs: number,
  ) {
    const target = connections.reachability.target;
    const closed = (): Error | undefined => (this.closed ? new ConfirmerClosedError() : undefined);
    this.lanes = new ConfirmLanes(
      connections,
      (connection) => new ConfirmLane(connection, replicas, timeoutMs, target, closed),
    );
    this.commandTimeoutMs = connections.commandTimeoutMs;
    connections.beforeClose(() => this.close());
  }

  async confirm(write: ConfirmWrite, bound: ConfirmBound = {}): Promise<Confirmation> {
    if (this.closed) throw new ConfirmerClosedError();
    if (bound.untilMs === undefined && bound.signal === undefined) return this.lanes.submit({ write, bound });
    return untilBound(() => this.lanes.submit({ write, bound }), bound);
  }

  reconnect(key: string): void {
    this.lanes.reset(key);
  }

  private async close(): Promise<void> {
    this.closed = true;
    this.lanes.resetAll();
  }
}
