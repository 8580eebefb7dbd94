import { BASE62_WIDTH, decodeBase62, encodeBase62, encodeBase62Parts, isBase62 } from './base62';
import { PARTITION_TAGS, snowflakeParts, type SnowflakeParts, type SnowflakeSource } from './snowflake';

/**
 * A branded id: a fixed brand (for jobs, `JOB`) followed by eleven Base62
 * characters of a 64-bit Snowflake. Because the brand is constant and the Base62
 * part is fixed width in an ASCII-ordered alphabet, byte order is mint order.
 */
export class BrandedId<Brand extends string = string> {
  readonly length: number;

  constructor(readonly brand: Brand) {
    if (!/^[A-Z]{1,8}$/.test(brand)) {
      throw new RangeError(`A brand is 1 to 8 upper-case ASCII letters, got ${JSON.stringify(brand)}`);
    }
    this.length = brand.length + BASE62_WIDTH;
  }

  /**
   * Total: any input, never throws. True only for this brand + a valid 64-bit Base62 body.
   * Checked without decoding (isBase62): every key built from an id and every id an enqueue
   * sends passes through here.
   */
  valid(candidate: unknown): candidate is string {
    return (
      typeof candidate === 'string' &&
      candidate.length === this.length &&
      candidate.startsWith(this.brand) &&
      isBase62(candidate.slice(this.brand.length))
    );
  }

  /** The Snowflake inside an id, or undefined when the id is not valid. */
  decode(candidate: unknown): bigint | undefined {
    if (typeof candidate !== 'string' || candidate.length !== this.length) return undefined;
    if (!candidate.startsWith(this.brand)) return undefined;
    return decodeBase62(candidate.slice(this.brand.length));
  }

  format(snowflake: bigint): string {
    return this.brand + encodeBase62(snowflake);
  }

  /** When and where an id was minted; undefined for an invalid id. */
  parts(candidate: unknown): SnowflakeParts | undefined {
    const value = this.decode(candidate);
    return value === undefined ? undefined : snowflakeParts(value);
  }

  /**
   * Formats each Snowflake of `snowflakes`; errors it throws (a lost node lease) pass through.
   * `tag`: the partition index the id carries (see PARTITION_TAG_BITS).
   */
  minter(snowflakes: SnowflakeSource): (tag?: number) => string {
    return (tag) => {
      const { high, low } = snowflakes.nextParts(tag);
      return this.brand + encodeBase62Parts(high, low);
    };
  }
}

/** A job id: `JOB` + 11 Base62 characters. The type brand keeps raw strings out of key builders. */
export type JobId = string & { readonly __jobId: true };

export const JOB_IDS = new BrandedId('JOB');

export function isJobId(candidate: unknown): candidate is JobId {
  return JOB_IDS.valid(candidate);
}

/** Byte-wise comparison; for two valid ids of one brand this is mint order. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The partition index a job id carries (its Snowflake's low PARTITION_TAG_BITS bits), or
 * undefined for an invalid id. Meaningful for ids minted for a partitioned queue; any other
 * id has some value there too, which is why a lookup that misses tries the unpartitioned
 * queue as well (docs/partitions.md).
 */
export function partitionTagOf(id: string): number | undefined {
  const parts = JOB_IDS.parts(id);
  return parts === undefined ? undefined : parts.sequence % PARTITION_TAGS;
}
