import { NodeLeaseLostError, type NodeLeaseBlocker } from './node-lease-lost-error';
import { SnowflakeMinter, type Clock, type SnowflakeSource } from './snowflake';

/**
 * What one tenure of a node lease allows (one tenure = one successful acquisition, with its
 * renewals). The times in ms since the Unix epoch are on the Redis server's clock; the
 * `validUntil` deadline is on this process's monotonic clock. The holder updates the object
 * in place when a renewal is confirmed, and drops it when the lease is lost.
 */
export interface MintWindow {
  readonly node: number;
  /**
   * No Snowflake of this tenure is earlier: one window after the acquisition, above any id a
   * previous holder can have minted. Until the server clock reaches it, ids are stamped with
   * it (a little ahead of time) rather than waited for.
   */
  readonly floorMs: number;
  /** No Snowflake of this tenure is later: the last confirmation plus the lease, less the margin. */
  readonly ceilingMs: number;
  /** Monotonic time after which nothing is minted until a renewal is confirmed. */
  readonly validUntil: number;
  /** Server time minus monotonic time at the last confirmation, so `now + offset` never runs ahead of the server. */
  readonly serverOffsetMs: number;
}

/**
 * Mints Snowflakes on the current window of a node lease, and only inside it: never past the
 * local validity deadline, never before the window's floor or after its ceiling. Those bounds
 * are what make ids unique across holders (docs/model.md); the clock is the Redis server's
 * (measured through the monotonic clock), so no host's wall clock enters an id.
 *
 * Pure and synchronous: the lease (connection/node-lease.ts) keeps the window up to date.
 */
export class LeasedSnowflakes implements SnowflakeSource {
  private minter?: SnowflakeMinter;
  private minterWindow?: MintWindow;
  private now = 0;
  private lastMint?: number;

  constructor(
    private readonly window: () => MintWindow | undefined,
    /** Monotonic milliseconds (performance.now in production). */
    private readonly monotonic: Clock,
  ) {}

  /** The node ids are minted on now, or undefined while none is held. */
  /** When the last id was minted, on the monotonic clock; undefined before the first. */
  get lastMintAt(): number | undefined {
    return this.lastMint;
  }

  get node(): number | undefined {
    return this.window()?.node;
  }

  /** Why mint would refuse now, or undefined when it would succeed. Consumes nothing. */
  blocker(): NodeLeaseBlocker | undefined {
    const window = this.window();
    return window === undefined ? 'not-held' : this.blockerIn(window, this.monotonic());
  }

  /** @throws NodeLeaseLostError when the lease does not allow minting now (nothing is minted). */
  nextParts(tag?: number): { high: number; low: number } {
    const window = this.window();
    if (window === undefined) throw new NodeLeaseLostError('not-held', undefined);
    // One reading of the clock decides both the checks and the id's time, so they agree.
    this.now = this.monotonic();
    const blocker = this.blockerIn(window, this.now);
    if (blocker !== undefined) throw new NodeLeaseLostError(blocker, window.node);
    const parts = this.minterFor(window).nextParts(tag);
    this.lastMint = this.now;
    return parts;
  }

  private blockerIn(window: MintWindow, now: number): NodeLeaseBlocker | undefined {
    if (now >= window.validUntil) return 'unconfirmed';
    const last = this.minterWindow === window ? this.minter!.lastTimeMs : -Infinity;
    const next = Math.max(Math.floor(now + window.serverOffsetMs), last, window.floorMs);
    // The minter may borrow one millisecond past `next` (over 4096 ids in one), so stopping
    // one short of the ceiling keeps every id at or below it. A new tenure's window opens
    // with its first confirmed renewal, which lifts the ceiling above the floor.
    if (next >= window.ceilingMs) return last < window.floorMs ? 'waiting' : 'exhausted';
    return undefined;
  }

  /**
   * One SnowflakeMinter per tenure. A new tenure needs no state from the last one: its floor is
   * above the last tenure's ceiling, so its ids are greater anyway (docs/model.md).
   */
  private minterFor(window: MintWindow): SnowflakeMinter {
    if (this.minterWindow !== window || this.minter === undefined) {
      // Never below the floor: before the server clock gets there, ids carry the floor's time.
      this.minter = new SnowflakeMinter(window.node, () =>
        Math.max(this.now + window.serverOffsetMs, window.floorMs),
      );
      this.minterWindow = window;
    }
    return this.minter;
  }
}
