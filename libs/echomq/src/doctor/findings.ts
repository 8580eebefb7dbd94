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
  'lease-far-future',
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
    problem:
      'active jobs whose lease expired longer ago than the grace: due for reaping, and no reaper has (is one running?)',
    repair: 'reaped: back to pending, or to dead with no attempts left',
  },
  'lease-far-future': {
    problem:
      'active jobs whose lease deadline is further ahead than any lease (now + 1,000,000,000 ms): no reap would ever return them',
    repair: 'deadline set to now: the next reap returns them, unless a live holder renews the lease first',
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

/**
 * Ids remembered per kind to count each once (a job in two sets is met from both; SCAN may
 * return a key twice): past this many, ids are no longer remembered, so memory stays bounded
 * under mass corruption, and a job met again may be counted twice.
 */
export const FINDING_IDS_REMEMBERED = 100_000;

interface KindLog {
  readonly seen: Set<string>;
  readonly ids: string[];
  readonly details: string[];
  /** Ids added (each once while remembered). */
  added: number;
  /** Of those, how many the repair mended. */
  mended: number;
  /** A count read rather than collected (jobs past a score), and how many of those were mended. */
  counted?: number;
  repairedCount?: number;
}

/** Collects findings of one queue: each id counted once per kind, the first idsShown kept. */
export class FindingLog {
  private readonly kinds = new Map<FindingKind, KindLog>();

  constructor(
    private readonly queue: string,
    private readonly idsShown: number,
    private readonly repairing: boolean,
  ) {}

  private of(kind: FindingKind): KindLog {
    let log = this.kinds.get(kind);
    if (!log) this.kinds.set(kind, (log = { seen: new Set(), ids: [], details: [], added: 0, mended: 0 }));
    return log;
  }

  /** One job (or lane) found; `mended` says whether the repair mended it (repairing only). */
  add(kind: FindingKind, id: string, detail: string, mended = this.repairing): void {
    const log = this.of(kind);
    if (log.seen.has(id)) return;
    if (log.seen.size < FINDING_IDS_REMEMBERED) log.seen.add(id);
    log.added++;
    if (mended && this.repairing) log.mended++;
    if (log.ids.length < this.idsShown) {
      log.ids.push(id);
      log.details.push(detail);
    }
  }

  /** A kind whose count is read, not collected (jobs past a score): at least the ids added. */
  count(kind: FindingKind, count: number): void {
    this.of(kind).counted = count;
  }

  /** How many a repair mended, for a kind whose count is read. */
  repaired(kind: FindingKind, count: number): void {
    this.of(kind).repairedCount = count;
  }

  findings(): DoctorFinding[] {
    const out: DoctorFinding[] = [];
    for (const kind of FINDING_KINDS) {
      const log = this.kinds.get(kind);
      if (!log) continue;
      const count = Math.max(log.counted ?? 0, log.added);
      if (count === 0) continue;
      out.push({
        kind,
        queue: this.queue,
        problem: FINDING_TEXT[kind].problem,
        count,
        ids: log.ids,
        details: log.details,
        repaired: this.repairing ? Math.min(count, log.repairedCount ?? log.mended) : 0,
        ...(this.repairing ? { repair: FINDING_TEXT[kind].repair } : {}),
      });
    }
    return out;
  }
}
