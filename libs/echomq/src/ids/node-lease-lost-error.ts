import { EchoMqError } from '../errors';

/**
 * Why no id can be minted right now on a leased node number (docs/model.md, "Why ids are unique"):
 * - `not-held`: no node is leased (still acquiring, lost and re-leasing, or shut down);
 * - `waiting`: a node was just leased, and a previous holder could still be minting on it
 *   for one more lease period, so this holder waits that long before its first id;
 * - `unconfirmed`: no renewal was confirmed in time (Redis slow or unreachable), so this
 *   process can no longer be sure it still holds the node;
 * - `exhausted`: the ids up to the lease's time horizon are used up until a renewal moves it.
 */
export type NodeLeaseBlocker = 'not-held' | 'waiting' | 'unconfirmed' | 'exhausted';

const EXPLANATIONS: Record<NodeLeaseBlocker, string> = {
  'not-held': 'no Snowflake node number is leased',
  waiting: 'the node number was just leased and is not usable until one lease period has passed',
  unconfirmed: 'the node lease was not renewed in time',
  exhausted: 'the ids within the node lease are used up until its next renewal',
};

/** Minting was refused because this process cannot prove it holds its node number. Nothing was minted. */
export class NodeLeaseLostError extends EchoMqError {
  constructor(
    readonly reason: NodeLeaseBlocker,
    readonly node: number | undefined,
  ) {
    super(
      'NODE_LEASE_LOST',
      `No job id can be minted now: ${EXPLANATIONS[reason]}` +
        `${node === undefined ? '' : ` (node ${node})`}. Await the minter's ready(), or configure nodeId.`,
    );
  }
}
