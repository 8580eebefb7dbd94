/** How many unmatched cancels one claim loop keeps at most: the cancels stream's own cap. */
export const RECENT_CANCELS_MAX = 1_000;

/**
 * Cancels (id, attempt) that matched no job running here when they were read, kept for a short
 * while. The cancel and the claim reply travel on different connections, so a removal can be
 * read before the claim that took the job is launched: its reply was slow, or lost and read back
 * by a repeat. Checked at launch, a kept cancel aborts the job at once instead of at its next
 * heartbeat.
 *
 * Bounded both ways: an entry lives `keepMs` (the longest a claim reply can come after the claim
 * ran: the replay window), and past `max` entries the oldest go first. Most entries are other
 * processes' jobs, so they are never taken and just expire. A cancel forgotten early (more than
 * `max` removals within `keepMs`) is still caught by the job's heartbeat, as before.
 */
export class RecentCancels {
  /** claim ('id:attempt') -> local time it is forgotten; insertion order is expiry order. */
  private readonly kept = new Map<string, number>();

  constructor(
    private readonly keepMs: number,
    private readonly max = RECENT_CANCELS_MAX,
    private readonly now: () => number = Date.now,
  ) {}

  get size(): number {
    return this.kept.size;
  }

  remember(id: string, attempt: number): void {
    const claim = `${id}:${attempt}`;
    this.kept.delete(claim); // a repeat moves to the back, keeping insertion order = expiry order
    this.kept.set(claim, this.now() + this.keepMs);
    this.forgetOld();
  }

  /** Whether this claim was cancelled lately; a claim is taken once. Free while nothing is kept. */
  take(id: string, attempt: number): boolean {
    if (this.kept.size === 0) return false;
    this.forgetOld();
    return this.kept.delete(`${id}:${attempt}`);
  }

  /** Drops expired entries and those past `max`, oldest first: stops at the first one kept. */
  private forgetOld(): void {
    const now = this.now();
    for (const [claim, until] of this.kept) {
      if (until > now && this.kept.size <= this.max) return;
      this.kept.delete(claim);
    }
  }
}
