/**
 * The reference model of one queue, written from DESIGN.md §1: a job's state is the set that
 * holds it, attempts is the fencing token, and every transition either moves a job as the
 * table says or (when the claim is stale / the job is missing) changes nothing.
 *
 * The model never reads Redis. Values only the server can know (its clock) are taken from
 * the transition's reply (lease deadline, run-at) and then checked against the sets.
 */
import type { ClaimedJobRecord, ClaimRef, EnqueueOutcome, RemovedFrom } from '@app/echomq';

/** Leases, delays and backoffs are long, so only a score rewritten into the past is ever due. */
export const LEASE_MS = 3_600_000;
export const LATER_MS = 3_600_000;
export const RETAIN_MS = 3_600_000;
export const IDEMPOTENCY_TTL_MS = 3_600_000;
export const IDEM_KEYS = ['k0', 'k1', 'k2'] as const;

export const SET_NAMES = ['pending', 'active', 'schedule', 'dead'] as const;
export type SetName = (typeof SET_NAMES)[number];
/** completed = row retained in no set; gone = no row and no set (completed without retention, or removed). */
export type Place = SetName | 'completed' | 'gone';

export type Score =
  | { readonly kind: 'exact'; readonly value: number }
  /** enqueued with a relative delay: run-at = server now at the call + delay, now >= notBefore. */
  | { readonly kind: 'delayed'; readonly delay: number; readonly notBefore: number };

const ZERO: Score = { kind: 'exact', value: 0 };

export interface ModelJob {
  readonly id: string;
  /** Mint order. */
  readonly seq: number;
  readonly data: string;
  readonly name: string;
  readonly max: number;
  readonly idem: string | null;
  place: Place;
  /** Number of claims so far: the fencing token. */
  attempts: number;
  /** Attempts at the start of the current retry budget. */
  base: number;
  /** Claimant of the current claim (active only). */
  claimant: string | null;
  /** Score in the set that holds the job. */
  score: Score;
  /** active: lease deadline rewritten into the past; schedule: run-at rewritten into the past. */
  due: boolean;
  error: string | null;
  result: string | null;
  progress: string | null;
  /** Completed (retained): finished-at is at least this (server ms). */
  finishedNotBefore: number;
}

export interface ModelEvent {
  readonly type: string;
  /** The event's id or comma-joined ids. */
  readonly ids: string;
}

export type When = 'now' | 'delay' | 'runAtPast' | 'runAtFuture' | 'runAtWins';

export interface ResolvedSpec {
  readonly id: string;
  readonly data: string;
  readonly name: string;
  readonly max: number;
  readonly delayMs: number;
  readonly runAtMs: number;
  readonly idem: string | null;
}

export type EnqueuePrediction =
  | { readonly kind: 'ok'; readonly outcomes: EnqueueOutcome[] }
  /** Refused; the error names one of `ids` (ids with a row, or given twice in the batch). */
  | { readonly kind: 'exists'; readonly ids: readonly string[] };

export type FailMode = 'backoff' | 'now' | 'unrecoverable';

export class Model {
  /** Jobs ever written. An id minted but never written (its batch was refused, or an idempotency
   *  key matched) has a seq but no job: a phantom, which must never get a row or a set. */
  readonly jobs = new Map<string, ModelJob>();
  /** Mint order of every id this run minted. */
  readonly seqOf = new Map<string, number>();
  readonly idem = new Map<string, string>();
  /** Every claim ever handed out, current or not: the source of stale calls. */
  readonly claims: ClaimRef[] = [];
  /** How each claim that is no longer current ended, by claimant (claimants are unique). */
  readonly endedBy = new Map<string, 'complete' | 'fail' | 'release' | 'reap' | 'remove'>();
  readonly metrics: Record<string, number> = {};
  readonly events: ModelEvent[] = [];
  paused = false;
  /** Commands run so far (bounds the sequence). */
  steps = 0;
  private nextSeq = 0;
  private tick = 0;

  /** pastBase: a server time well before the run; rewritten scores are pastBase + tick. */
  constructor(readonly pastBase: number) {}

  // ---------------------------------------------------------------- reads

  label(id: string): string {
    const seq = this.seqOf.get(id);
    return seq === undefined ? id : `j${seq}`;
  }

  /** Jobs in one place, in mint order. */
  inPlace(place: Place): ModelJob[] {
    return [...this.jobs.values()].filter((job) => job.place === place).sort((a, b) => a.seq - b.seq);
  }

  /** Every id this run minted, in mint order. */
  allIds(): string[] {
    return [...this.seqOf.keys()].sort((a, b) => this.seqOf.get(a)! - this.seqOf.get(b)!);
  }

  withRow(): ModelJob[] {
    return [...this.jobs.values()].filter(hasRow).sort((a, b) => a.seq - b.seq);
  }

  holds(ref: ClaimRef): boolean {
    const job = this.jobs.get(ref.id);
    return (
      job !== undefined &&
      job.place === 'active' &&
      job.attempts === ref.attempt &&
      job.claimant === ref.claimant
    );
  }

  /** Due jobs of one set, in the order a bounded ZRANGEBYSCORE returns them (score, then id). */
  dueIn(place: 'active' | 'schedule'): ModelJob[] {
    return this.inPlace(place)
      .filter((job) => job.due)
      .sort((a, b) => exactScore(a) - exactScore(b) || a.seq - b.seq);
  }

  describe(): string {
    const rows = this.allIds().map((id) => {
      const job = this.jobs.get(id);
      if (!job) return `  ${this.label(id)} ${id} phantom`;
      return (
        `  ${this.label(id)} ${id} ${job.place} a=${job.attempts} b=${job.base} m=${job.max}` +
        ` c=${job.claimant ?? '-'} due=${job.due} idem=${job.idem ?? '-'}`
      );
    });
    return [`paused=${this.paused} idem=${JSON.stringify([...this.idem])}`, ...rows].join('\n');
  }

  // ---------------------------------------------------------------- bookkeeping

  mint(id: string): void {
    this.seqOf.set(id, this.nextSeq++);
  }

  pastScore(sameInstant: boolean): number {
    if (!sameInstant) this.tick += 1;
    return this.pastBase + this.tick;
  }

  private bump(metric: string, by = 1): void {
    if (by > 0) this.metrics[metric] = (this.metrics[metric] ?? 0) + by;
  }

  private emit(type: string, ids: readonly string[]): void {
    if (ids.length > 0) this.events.push({ type, ids: ids.join(',') });
  }

  /** A refused complete / fail / extend / release: only the 'stale' counter moves. */
  stale(count: number): void {
    this.bump('stale', count);
  }

  private get(id: string): ModelJob {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`model: no job ${id}`);
    return job;
  }

  // ---------------------------------------------------------------- transitions

  /** enqueue: all or nothing; an idempotency key returns the existing id; an id with a row is refused. */
  enqueue(specs: readonly ResolvedSpec[], serverNotBefore: number): EnqueuePrediction {
    const outcomes: EnqueueOutcome[] = [];
    const seenIds = new Set<string>();
    const seenKeys = new Map<string, string>();
    const created: ResolvedSpec[] = [];
    const clashes = new Set<string>();
    for (const spec of specs) {
      const existing = spec.idem === null ? undefined : (seenKeys.get(spec.idem) ?? this.idem.get(spec.idem));
      if (existing !== undefined) {
        outcomes.push({ id: existing, created: false });
        continue;
      }
      const job = this.jobs.get(spec.id);
      if (seenIds.has(spec.id) || (job !== undefined && hasRow(job))) clashes.add(spec.id);
      seenIds.add(spec.id);
      if (spec.idem !== null) seenKeys.set(spec.idem, spec.id);
      created.push(spec);
      outcomes.push({ id: spec.id, created: true });
    }
    if (clashes.size > 0) return { kind: 'exists', ids: [...clashes] };
    for (const spec of created) {
      if (spec.idem !== null) this.idem.set(spec.idem, spec.id);
      const runAt = spec.runAtMs > 0 ? spec.runAtMs : 0;
      let place: Place = 'pending';
      let score: Score = ZERO;
      if (runAt > 0) {
        // An absolute run-at wins over the delay; in the past it means now.
        if (runAt > serverNotBefore) {
          place = 'schedule';
          score = { kind: 'exact', value: runAt };
        }
      } else if (spec.delayMs > 0) {
        place = 'schedule';
        score = { kind: 'delayed', delay: spec.delayMs, notBefore: serverNotBefore };
      }
      this.jobs.set(spec.id, {
        id: spec.id,
        seq: this.seqOf.get(spec.id)!,
        data: spec.data,
        name: spec.name,
        max: spec.max,
        idem: spec.idem,
        place,
        attempts: 0,
        base: 0,
        claimant: null,
        score,
        due: false,
        error: null,
        result: null,
        progress: null,
        finishedNotBefore: 0,
      });
    }
    this.bump('enqueued', created.length);
    this.emit(
      'enqueued',
      created.map((spec) => spec.id),
    );
    return { kind: 'ok', outcomes };
  }

  private promoteDue(limit: number): ModelJob[] {
    const due = this.dueIn('schedule').slice(0, limit);
    for (const job of due) {
      job.place = 'pending';
      job.score = ZERO;
      job.due = false;
    }
    this.bump('promoted', due.length);
    this.emit(
      'promoted',
      due.map((job) => job.id),
    );
    return due;
  }

  /** Would a claim change nothing at all? */
  claimIsNoop(): boolean {
    return this.dueIn('schedule').length === 0 && (this.paused || this.inPlace('pending').length === 0);
  }

  claim(
    count: number,
    prefix: string,
    promoteLimit: number,
    deadline: number,
  ): { jobs: ClaimedJobRecord[]; nextRunAt: number | null | 'unknown' } {
    this.promoteDue(promoteLimit);
    const nextRunAt = this.nextRunAt();
    if (this.paused) return { jobs: [], nextRunAt };
    const taken = this.inPlace('pending').slice(0, count);
    const jobs = taken.map((job, index): ClaimedJobRecord => {
      job.place = 'active';
      job.attempts += 1;
      job.claimant = `${prefix}.${index}`;
      job.score = { kind: 'exact', value: deadline };
      job.due = false;
      this.claims.push({ id: job.id, attempt: job.attempts, claimant: job.claimant });
      return {
        id: job.id,
        attempt: job.attempts,
        claimant: job.claimant,
        data: job.data,
        name: job.name,
        maxAttempts: job.max,
        budgetBase: job.base,
      };
    });
    this.bump('claimed', jobs.length);
    this.emit(
      'claimed',
      jobs.map((job) => job.id),
    );
    return { jobs, nextRunAt };
  }

  /** The soonest run-at in schedule; 'unknown' (but some) when a delayed score is not known exactly. */
  private nextRunAt(): number | null | 'unknown' {
    const scheduled = this.inPlace('schedule');
    if (scheduled.length === 0) return null;
    if (scheduled.some((job) => job.score.kind !== 'exact')) return 'unknown';
    return Math.min(...scheduled.map(exactScore));
  }

  extend(refs: readonly ClaimRef[], deadline: number): boolean[] {
    const held = refs.map((ref) => this.holds(ref));
    const extended: string[] = [];
    refs.forEach((ref, i) => {
      if (!held[i]) return;
      const job = this.get(ref.id);
      job.score = { kind: 'exact', value: deadline };
      job.due = false;
      extended.push(ref.id);
    });
    this.bump('extended', extended.length);
    this.emit('extended', extended);
    this.stale(held.filter((h) => !h).length);
    return held;
  }

  /** complete: active -> completed (row kept with its result) or gone. False when stale. */
  complete(ref: ClaimRef, keepMs: number, result: string, serverNotBefore: number): boolean {
    return this.completeMany([{ claim: ref, result }], keepMs, serverNotBefore)[0];
  }

  private finish(ref: ClaimRef, keepMs: number, result: string, serverNotBefore: number): void {
    const job = this.get(ref.id);
    this.endedBy.set(ref.claimant, 'complete');
    job.claimant = null;
    job.due = false;
    job.score = ZERO;
    if (keepMs > 0) {
      job.place = 'completed';
      job.result = result;
      job.finishedNotBefore = serverNotBefore;
    } else {
      job.place = 'gone';
    }
  }

  /**
   * Many completions in one call behave as if made one after the other: a claim completes
   * once, and a second completion of it (or of its job) in the same call is stale.
   */
  completeMany(
    completions: readonly { claim: ClaimRef; result: string }[],
    keepMs: number,
    serverNotBefore: number,
  ): boolean[] {
    const done: string[] = [];
    const out = completions.map(({ claim, result }) => {
      if (!this.holds(claim)) return false;
      this.finish(claim, keepMs, result, serverNotBefore);
      done.push(claim.id);
      return true;
    });
    this.bump('completed', done.length);
    this.emit('completed', done);
    this.stale(out.filter((ok) => !ok).length);
    return out;
  }

  /** progress: the current claim records progress on the row; no state change. */
  progress(ref: ClaimRef, value: string): void {
    if (!this.holds(ref)) return;
    this.get(ref.id).progress = value;
    this.emit('progress', [ref.id]);
  }

  /** The state a fail moves the job to, or 'stale'. Does not change the model. */
  failTarget(ref: ClaimRef, mode: FailMode): 'stale' | 'schedule' | 'pending' | 'dead' {
    if (!this.holds(ref)) return 'stale';
    const job = this.get(ref.id);
    if (mode === 'unrecoverable' || job.attempts - job.base >= job.max) return 'dead';
    return mode === 'backoff' ? 'schedule' : 'pending';
  }

  fail(ref: ClaimRef, mode: FailMode, error: string, runAt: number): void {
    const target = this.failTarget(ref, mode);
    if (target === 'stale') {
      this.stale(1);
      return;
    }
    const job = this.get(ref.id);
    this.endedBy.set(ref.claimant, 'fail');
    job.place = target;
    job.claimant = null;
    job.error = error;
    job.due = false;
    job.score = target === 'schedule' ? { kind: 'exact', value: runAt } : ZERO;
    this.bump(target === 'dead' ? 'dead' : 'failed');
    this.emit(target === 'dead' ? 'dead' : 'failed', [ref.id]);
  }

  /** release: active -> pending; the released claim does not count against the budget. */
  release(refs: readonly ClaimRef[]): boolean[] {
    const released: string[] = [];
    const out = refs.map((ref) => {
      if (!this.holds(ref)) return false;
      const job = this.get(ref.id);
      this.endedBy.set(ref.claimant, 'release');
      job.place = 'pending';
      job.base += 1;
      job.claimant = null;
      job.score = ZERO;
      job.due = false;
      released.push(ref.id);
      return true;
    });
    this.bump('released', released.length);
    this.emit('released', released);
    this.stale(out.filter((ok) => !ok).length);
    return out;
  }

  reap(limit: number): { toPending: number; toDead: number; more: boolean } {
    const due = this.dueIn('active');
    const expired = due.slice(0, limit);
    const toPending: string[] = [];
    const toDead: string[] = [];
    for (const job of expired) {
      job.error = `lease expired during attempt ${job.attempts}`;
      this.endedBy.set(job.claimant!, 'reap');
      job.claimant = null;
      job.score = ZERO;
      job.due = false;
      if (job.attempts - job.base >= job.max) {
        job.place = 'dead';
        toDead.push(job.id);
      } else {
        job.place = 'pending';
        toPending.push(job.id);
      }
    }
    this.bump('reaped', toPending.length);
    this.emit('reaped', toPending);
    this.bump('dead', toDead.length);
    this.emit('dead', toDead);
    return { toPending: toPending.length, toDead: toDead.length, more: due.length > limit };
  }

  promote(limit: number): { promoted: number; more: boolean } {
    const dueCount = this.dueIn('schedule').length;
    const promoted = this.promoteDue(limit);
    return { promoted: promoted.length, more: dueCount > limit };
  }

  /** retry: dead -> pending with a fresh budget; attempts keeps counting. */
  retry(id: string): 'ok' | 'notDead' | 'notFound' {
    const job = this.jobs.get(id);
    if (!job || !hasRow(job)) return 'notFound';
    if (job.place !== 'dead') return 'notDead';
    job.place = 'pending';
    job.base = job.attempts;
    this.bump('retried');
    this.emit('retried', [id]);
    return 'ok';
  }

  /** remove: any state -> gone, with its idempotency key; a claim on it becomes stale. */
  remove(id: string): RemovedFrom | 'notFound' {
    const job = this.jobs.get(id);
    if (!job || !hasRow(job)) return 'notFound';
    const was = job.place as RemovedFrom;
    if (job.idem !== null && this.idem.get(job.idem) === id) this.idem.delete(job.idem);
    if (job.claimant !== null) this.endedBy.set(job.claimant, 'remove');
    job.place = 'gone';
    job.claimant = null;
    job.due = false;
    job.score = ZERO;
    this.bump('removed');
    this.emit('removed', [id]);
    return was;
  }

  /** A retained completed row expires: the job is gone (its idempotency key lives on). */
  retentionEnds(id: string): void {
    const job = this.get(id);
    job.place = 'gone';
    job.result = null;
  }

  /** Time passes for one job: its lease deadline or run-at is now in the past. */
  passTime(job: ModelJob, score: number): void {
    job.score = { kind: 'exact', value: score };
    job.due = true;
  }
}

export function hasRow(job: ModelJob): boolean {
  return job.place !== 'gone';
}

export function exactScore(job: ModelJob): number {
  if (job.score.kind !== 'exact') throw new Error(`model: ${job.id} has no exact score`);
  return job.score.value;
}
