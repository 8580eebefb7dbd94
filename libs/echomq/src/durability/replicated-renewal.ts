import type { Logger } from '@nestjs/common';
import type { ConfirmWrite, ReplicaWait } from './replica-confirmer';

/** A node lease renewal's reply: 1 if the key is still the tenure's, and the server's time in ms. */
export type RenewalReply = readonly [held: number, serverMs: number];

/** A renewal that settles its tenure: the key is not the tenure's any more, or it is and enough replicas have it. */
export interface ReplicatedRenewalReply {
  readonly reply: RenewalReply;
  /** The key is the tenure's and `replicas` replicas confirmed it: the tenure's window may open. */
  readonly replicated: boolean;
}

/**
 * A node lease's first confirmation with durable writes (module option `durable`): the renewal
 * (a compare-and-expire of the lease key, the write WAIT waits for) and WAIT in one pipeline, on
 * the master that holds the lease key (on a cluster, the one serving the key's slot).
 *
 * Why: if that master fails, the promoted replica must hold this tenure's token, not an older
 * one (an earlier holder's key that expired or was deleted here but not yet there), or the
 * earlier holder would renew there and mint beside this one (docs/model.md, "Assumptions").
 */
export class ReplicatedRenewal {
  /** A tenure waiting for its replicas was reported (once per lease, not per renewal). */
  private warned = false;

  constructor(
    private readonly durable: ReplicaWait,
    private readonly logger: Pick<Logger, 'warn'>,
  ) {}

  /**
   * Sends `renewal` of node `node` with its WAIT. Resolves with its reply once that settles the
   * tenure; undefined while the key is the tenure's but not yet on enough replicas: like a failed
   * renewal, the window stays shut and the next renewal asks again. Rejects as the confirmation
   * does (a refusal for good, or nothing known).
   */
  async renew(node: number, renewal: ConfirmWrite): Promise<ReplicatedRenewalReply | undefined> {
    const { reply, acknowledged } = await this.durable.confirm(renewal);
    const renewed = reply as RenewalReply;
    if (renewed[0] !== 1) return { reply: renewed, replicated: false };
    if (acknowledged >= this.durable.replicas) return { reply: renewed, replicated: true };
    if (!this.warned) {
      this.warned = true;
      this.logger.warn(
        `Snowflake node ${node} is leased, but only ${acknowledged} of ${this.durable.replicas} replicas ` +
          'confirmed it: minting waits for them (durable writes)',
      );
    }
    return undefined;
  }
}
