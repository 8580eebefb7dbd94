/**
 * Which partition a lane or a key belongs to: a stable hash of its name modulo the count, the
 * same in every process and every release (32-bit FNV-1a over the UTF-16 code units), so
 * every producer sends a lane's jobs, or one idempotency key's, to the same partition.
 */
export function bucketOf(name: string, count: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

/**
 * Spreads jobs with neither lane nor key over the partitions in turn, one call at a time: a
 * batch goes whole to one partition, so it stays one all-or-nothing script call.
 */
export class RoundRobin {
  private next = Math.floor(Math.random() * 1_000_000);

  pick(count: number): number {
    const index = this.next % count;
    this.next = (this.next + 1) % 1_000_000_000;
    return index;
  }
}
