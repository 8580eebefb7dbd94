/**
 * Mints job ids; provided by EchoMqModule on the configured node number, or on one leased
 * from Redis (docs/model.md, "Why ids are unique").
 */
export interface JobIdMinter {
  /**
   * The next job id, synchronously (the hot path of enqueue).
   * @throws NodeLeaseLostError (code NODE_LEASE_LOST) while this process cannot prove it holds
   * its leased node number: nothing is minted, and ready() says when minting works again.
   * With a configured nodeId it never throws (the number's uniqueness is the operator's job).
   * `partition`: the index the id carries for a partitioned queue (ids/snowflake.ts, PARTITION_TAG_BITS).
   */
  mint(partition?: number): string;
  /** Resolves once mint() can succeed; rejects with NodeLeaseLostError after timeoutMs. */
  ready(timeoutMs: number): Promise<void>;
  /** The node number ids are minted on now; undefined while no lease is held. */
  readonly node: number | undefined;
}

export const JOB_ID_MINTER = Symbol('ECHOMQ_JOB_ID_MINTER');

/**
 * How long an enqueue waits for the minter: a new lease mints after one lease period
 * (NODE_LEASE_MS), and a lost one is replaced within a renewal interval more.
 */
export const JOB_ID_READY_TIMEOUT_MS = 10_000;
