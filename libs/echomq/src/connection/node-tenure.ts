import type { MintWindow } from '../ids';

/** One acquisition of one node number, kept current by its renewals. */
export class Tenure implements MintWindow {
  ceilingMs: number;
  validUntil: number;
  serverOffsetMs: number;
  readonly floorMs: number;
  /** Whether a renewal of this tenure was confirmed by the replicas (always true without durable writes). */
  replicated: boolean;

  constructor(
    readonly node: number,
    readonly token: string,
    private readonly windowMs: number,
    sentAt: number,
    receivedAt: number,
    serverMs: number,
    durable: boolean,
  ) {
    this.replicated = !durable;
    // A previous holder of this node may have lost its key to a deletion (a restart without
    // persistence, a failover) without knowing yet: it still mints up to its own ceiling, which
    // is below this floor because its last confirmation came before this acquisition.
    this.floorMs = serverMs + windowMs + 1;
    this.ceilingMs = serverMs + windowMs;
    this.validUntil = sentAt + windowMs;
    this.serverOffsetMs = serverMs - receivedAt;
  }

  /** A renewal sent at `sentAt` found the key ours at server time `serverMs`. */
  confirm(sentAt: number, receivedAt: number, serverMs: number): void {
    // The key's new TTL started after sentAt, so the deadline counted from sentAt is inside it.
    this.validUntil = Math.max(this.validUntil, sentAt + this.windowMs);
    this.ceilingMs = Math.max(this.ceilingMs, serverMs + this.windowMs);
    // serverMs was read between sentAt and receivedAt: anchoring it at receivedAt gives a
    // server clock that is never ahead of the real one, behind by at most the round trip.
    this.serverOffsetMs = serverMs - receivedAt;
  }
}
