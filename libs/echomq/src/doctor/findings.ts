/**
 * What the doctor reports: one finding per kind of broken invariant and queue, with how many
 * jobs (or lanes) have it, the first few of them, and what a repair did.
 */

export const FINDING_KINDS = [
  'malformed-member',
  'member-without-row',
  'in-two-sets',
  'wrong-pending-set',
  'orphan-row',
  'lease-expired',
  'lane-index',
  'lane-lists',
  'lane-active',
] as const;
export type FindingKind = (typeof FINDING_KINDS)[number];

/** Per kind: what is wrong, and what a repair does about it. */
export const FINDING_TEXT: { readonly [K in FindingKind]: { problem: string; repair: string } } = {
  'malformed-member': {
    problem: 'set members that are not job ids: no transition can ever act on them',
    repair: 'removed from their set',
  },
  'member-without-row': {
    problem: 'set members without a row (invariant 2): no transition can act on them',
    repair: 'removed from their set',
  },
  'in-two-sets': {
    problem: 'jobs in more than one state set (invariant 1)',
    repair: 'left in the one set the rule keeps (the details say which)',
  },
  'wrong-pending-set': {
    problem: "pending jobs in another lane's or level's set than their row names: no claim finds them",
    repair: "moved into their own lane's pending set at their level",
  },
  'orphan-row': {
    problem: 'rows of unfinished jobs in no state set (invariant 2): they would never run',
    repair: 'put back in pending, or in dead when their retry budget is spent',
  },
  'lease-expired': {
    problem: 'active jobs whose lease expired longer ago than the grace: due for reaping, and no reaper has',
    repair: 'reaped: back to pending, or to dead with no attempts left',
  },
  'lane-index': {
    problem: 'lane pending sets that ready and held do not name exactly once (or name without work)',
    repair: 'ready and held mended: work offered, stale entries removed',
  },
  'lane-lists': {
    problem: 'lanes-configured or lanes-paused disagree with the lane settings or the held lanes',
    repair: 'lists mended',
  },
  'lane-active': {
    problem: "lane-active counts that differ from the lanes' jobs in active (laneConcurrency counts them)",
    repair: 'set to the recount',
  },
};

export interface DoctorFinding {
  readonly kind: FindingKind;
  readonly queue: string;
  readonly problem: string;
  /** How many jobs (lanes for the lane kinds) have it. */
  readonly count: number;
  /** The first of them: job ids, or lanes (`<lane>` or `<lane>@<level>`). At most idsShown. */
  readonly ids: string[];
  /** Per id shown: what was seen, and for a repair what became of it. */
  readonly details: string[];
  /** How many were repaired (0 without repair). */
  readonly repaired: number;
  /** What the repair did; absent without repair. */
  readonly repair?: string;
}

/** An invariant, or part of one, that was not checked, and why. */
export interface Unchecked {
  readonly check: string;
  readonly reason: string;
}

/** Collects findings of one queue: each id counted once per kind, the first idsShown kept. */
export class FindingLog {
  private readonly seen = new Map<FindingKind, Set<string>>();
  private readonly shown = new Map<FindingKind, { ids: string[]; details: string[] }>();
  private readonly counts = new Map<FindingKind, number>();
  private readonly mended = new Map<FindingKind, number>();

  constructor(
    private readonly queue: string,
    private readonly idsShown: number,
    private readonly repairing: boolean,
  ) {}

  add(kind: FindingKind, id: string, detail: string): void {
    let ids = this.seen.get(kind);
    if (!ids) this.seen.set(kind, (ids = new Set()));
    if (ids.has(id)) return;
    ids.add(id);
    let shown = this.shown.get(kind);
    if (!shown) this.shown.set(kind, (shown = { ids: [], details: [] }));
    if (shown.ids.length < this.idsShown) {
      shown.ids.push(id);
      shown.details.push(detail);
    }
  }

  /** A kind whose count is read, not collected (jobs past a score): at least the ids added. */
  count(kind: FindingKind, count: number): void {
    this.counts.set(kind, count);
  }

  /** How many a repair mended, when it is not every one found. */
  repaired(kind: FindingKind, count: number): void {
    this.mended.set(kind, count);
  }

  findings(): DoctorFinding[] {
    const out: DoctorFinding[] = [];
    for (const kind of FINDING_KINDS) {
      const count = Math.max(this.counts.get(kind) ?? 0, this.seen.get(kind)?.size ?? 0);
      if (count === 0) continue;
      const shown = this.shown.get(kind) ?? { ids: [], details: [] };
      out.push({
        kind,
        queue: this.queue,
        problem: FINDING_TEXT[kind].problem,
        count,
        ids: shown.ids,
        details: shown.details,
        repaired: this.repairing ? Math.min(count, this.mended.get(kind) ?? count) : 0,
        ...(this.repairing ? { repair: FINDING_TEXT[kind].repair } : {}),
      });
    }
    return out;
  }
}
