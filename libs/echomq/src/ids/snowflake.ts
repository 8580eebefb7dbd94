/**
 * A 64-bit Snowflake: | 42 bits ms since EPOCH | 10 bits node | 12 bits sequence |.
 *
 * The timestamp sits in the high bits, so numeric order is mint order across
 * processes (to the millisecond) and strictly within one process.
 */
export const SNOWFLAKE_EPOCH_MS = Date.UTC(2025, 0, 1);
export const NODE_BITS = 10;
export const SEQUENCE_BITS = 12;
export const MAX_NODE = (1 << NODE_BITS) - 1;
const MAX_SEQUENCE = (1 << SEQUENCE_BITS) - 1;
const TIMESTAMP_SHIFT = BigInt(NODE_BITS + SEQUENCE_BITS);

export interface SnowflakeParts {
  /** Milliseconds since the Unix epoch. */
  readonly timeMs: number;
  readonly node: number;
  readonly sequence: number;
}

/** Milliseconds since the Unix epoch (a fraction is dropped). */
export type Clock = () => number;

/** What BrandedId.minter formats: the next Snowflake as two 32-bit halves. */
export interface SnowflakeSource {
  /** `tag` (see PARTITION_TAG_BITS): the low bits of the sequence the next Snowflake must carry. */
  nextParts(tag?: number): { high: number; low: number };
}

/**
 * A partitioned queue's jobs carry their partition's index in the low 4 bits of the
 * sequence (docs/partitions.md), so a lookup by id reads its partition off the id instead of
 * asking every partition. 4 bits: at most 16 partitions, and still 256 ids per millisecond
 * per process for any one partition (4,096 across 16).
 */
export const PARTITION_TAG_BITS = 4;
export const PARTITION_TAGS = 1 << PARTITION_TAG_BITS;
const TAG_MASK = PARTITION_TAGS - 1;

/**
 * Mints strictly increasing Snowflakes for one node.
 *
 * If the wall clock steps back, minting keeps using the last timestamp it issued
 * (and, when that millisecond's sequence runs out, borrows the next millisecond),
 * so ids from one process never go backwards. The node number must be unique among
 * live processes; the module leases it from Redis or takes it from configuration.
 */
export class SnowflakeMinter implements SnowflakeSource {
  private lastMs = -1;
  private sequence = 0;

  constructor(
    readonly node: number,
    private readonly clock: Clock = Date.now,
  ) {
    if (!Number.isInteger(node) || node < 0 || node > MAX_NODE) {
      throw new RangeError(`Snowflake node must be an integer in 0..${MAX_NODE}, got ${node}`);
    }
  }

  /** Unix ms of the last Snowflake issued (before the first: the epoch minus one). */
  get lastTimeMs(): number {
    return this.lastMs + SNOWFLAKE_EPOCH_MS;
  }

  next(tag?: number): bigint {
    this.advance(tag);
    return (
      (BigInt(this.lastMs) << TIMESTAMP_SHIFT) |
      (BigInt(this.node) << BigInt(SEQUENCE_BITS)) |
      BigInt(this.sequence)
    );
  }

  /**
   * The next Snowflake as its high and low 32-bit halves, without BigInt (the hot path
   * of minting): value = ms * 2^22 + node * 2^12 + sequence, so the high half is
   * floor(ms / 2^10) and the low half is (ms mod 2^10) * 2^22 + node * 2^12 + sequence.
   */
  nextParts(tag?: number): { high: number; low: number } {
    this.advance(tag);
    // value = ms * 2^22 + node * 2^12 + sequence; 2^22 * ms splits at bit 32 as below.
    const high = Math.floor(this.lastMs / 1024);
    const low = (this.lastMs % 1024) * 4194304 + this.node * 4096 + this.sequence;
    return { high, low };
  }

  /**
   * With a tag, the next sequence is the smallest one above the last whose low bits are the
   * tag: ids stay strictly increasing, and a run of one partition's ids uses every 16th value.
   */
  private advance(tag?: number): void {
    if (tag !== undefined && !(Number.isInteger(tag) && tag >= 0 && tag <= TAG_MASK)) {
      throw new RangeError(`Snowflake partition tag must be an integer in 0..${TAG_MASK}, got ${tag}`);
    }
    const first = tag ?? 0;
    const nowMs = Math.max(Math.floor(this.clock()) - SNOWFLAKE_EPOCH_MS, 0);
    if (nowMs > this.lastMs) {
      this.lastMs = nowMs;
      this.sequence = first;
      return;
    }
    let next = this.sequence + 1;
    if (tag !== undefined) {
      next = (this.sequence & ~TAG_MASK) + tag;
      if (next <= this.sequence) next += PARTITION_TAGS;
    }
    if (next <= MAX_SEQUENCE) {
      this.sequence = next;
    } else {
      // Sequence exhausted within one millisecond (or the clock went back):
      // advance the logical clock instead of waiting or repeating a value.
      this.lastMs += 1;
      this.sequence = first;
    }
  }
}

export function snowflakeParts(value: bigint): SnowflakeParts {
  return {
    timeMs: Number(value >> TIMESTAMP_SHIFT) + SNOWFLAKE_EPOCH_MS,
    node: Number((value >> BigInt(SEQUENCE_BITS)) & BigInt(MAX_NODE)),
    sequence: Number(value & BigInt(MAX_SEQUENCE)),
  };
}
