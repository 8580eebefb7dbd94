/**
 * The reference model of one queue, written from DESIGN.md §1: a job's state is the set that
 * holds it, attempts is the fencing token, and every transition either moves a job as the
 * table says or (when the claim is stale / the job is missing) changes nothing.
 *
 * The model never reads Redis. Values only the server can know (its clock) are taken from
 * the transition's reply (lease deadline, run-at) and then checked against the sets.
 *
 * Besides job state it knows every write call's reply record (invariant 9): which request
 * ids have one, so their keys are expected, and what a repeat of the call must answer.
 */
import {
  type BackoffPolicy,
  BUILT_IN_MAX_ATTEMPTS,
  type ClaimedJobRecord,
  type ClaimRef,
  DEAD_RETENTION_DEFAULTS,
  DEAD_TRIM_MAX,
  type EnqueueOutcome,
  type JobBackoffPolicy,
  type RemovedFrom,
  type SuspectRule,
} from '@app/echomq/internal';
import {
  ERROR_STACK_MAX,
  ERROR_TEXT_MAX,
  EVENT_ERROR_MAX_BYTES,
  EVENT_RESULT_MAX_BYTES,
  EVENT_RESULTS_TOTAL_MAX_BYTES,
  LEFT_OUT_RESULT_KEEP_MS,
} from '@app/echomq/scripts/limits';
import { CLAIM_SUSPECTS_SKIPPED_MAX } from '@app/echomq/scripts/lua/claim.lua';
import { DEFAULT_LANE, Flow, type Take, type Walk } from './flow';
import { idTime } from './ids';
import { Schedules } from './schedules';

/** Leases, delays and backoffs are long, so only a score rewritten into the past is ever due. */
export const LEASE_MS = 3_600_000;
export const LATER_MS = 3_600_000;
export const RETAIN_MS = 3_600_000;
export const IDEMPOTENCY_TTL_MS = 3_600_000;
export const IDEM_KEYS = ['k0', 'k1', 'k2'] as const;
/** Debounce and throttle keys a run enqueues under. */
export const DEDUPE_KEYS = ['d0', 'd1'] as const;

/** The serving worker's backoff in the fail steps (what failRequest is given). */
export const SERVING_BACKOFF: BackoffPolicy = { type: 'fixed', delayMs: LATER_MS };
/** Backoffs a job may carry of its own: each differs from the serving one, none is ever due unless rewritten. */
export const JOB_BACKOFFS: readonly JobBackoffPolicy[] = [
  { type: 'fixed', delayMs: 2 * LATER_MS },
  { type: 'exponential', delayMs: LATER_MS, maxDelayMs: 6 * LATER_MS, jitter: 0 },
];

export const SET_NAMES = ['pending', 'active', 'schedule', 'dead'] as const;
export type SetName = (typeof SET_NAMES)[number];
/** completed = row retained in no set; gone = no row and no set (completed without retention, or removed). */
export type Place = SetName | 'completed' | 'gone';

/** The eight write transitions: each takes a request id and records its reply (invariant 9). */
export const WRITE_KINDS = [
  'enqueue',
  'claim',
  'complete',
  'fail',
  'extend',
  'release',
  'retry',
  'remove',
  'throttle',
  'setLimits',
  'setLane',
  'pauseLane',
  'resumeLane',
  'log',
  'upsertSchedule',
  'advanceSchedule',
  'removeSchedule',
  'enqueueKeyed',
  'promoteJob',
  'updateJob',
  'retryAll',
  'drain',
  'clean',
  'obliterate',
] as const;
export type WriteKind = (typeof WRITE_KINDS)[number];

export type Score =
  | { readonly kind: 'exact'; readonly value: number }
  /** enqueued with a relative delay: run-at = server now at the call + delay, now >= notBefore. */
  | { readonly kind: 'delayed'; readonly delay: number; readonly notBefore: number };

const ZERO: Score = { kind: 'exact', value: 0 };

export interface ModelJob {
  readonly id: string;
  /** Mint call order (labels only; the order of ids is their byte order, see byId). */
  readonly seq: number;
  /** Its payload and name (a debounce replaces them). */
  /** The job's own retry budget (row field 'm'), or null: then the claiming worker's applies. */
  readonly max: number | null;
  /** The job's own backoff policy as JSON (row field 'o'), or null. */
  readonly backoff: string | null;
  readonly idem: string | null;
  /** Its lane (row field 'l' unless default) and priority level (row field 'y' unless 0); update moves them. */
  lane: string;
  level: number;
  /** Its own timeout ms (row field 't'), or null. */
  readonly timeoutMs: number | null;
  /**
   * The trace context its producer left (row field 'tc'), or null; the claim hands it back.
   * A schedule's occurrence carries its upsert's, passed from each occurrence to the next.
   */
  readonly traceContext: string | null;
  /** The maxAttempts of the worker that claimed the job last (row field 'w'): only without its own. */
  workerMax: number | null;
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
  /**
   * The stack of the last error (row 'es'): set by a fail that sends one, cut to ERROR_STACK_MAX
   * bytes; a fail without one, and a reap, clear it.
   */
  stack: string | null;
  result: string | null;
  progress: string | null;
  /** Completed (retained): finished-at is at least this (server ms). */
  finishedNotBefore: number;
  /** Completed (retained): the row's TTL is at most this (ms). */
  keepMs: number;
  /** Log lines written so far (row 'gn'; the newest JOB_LOG_LINES_KEPT as 'g:<n>'). */
  readonly logs: string[];
  /** An occurrence's schedule key (row 'sk') and planned run-at (row 'sa'), else null. */
  scheduleKey: string | null;
  plannedAt: number | null;
  /** A debounced job's key (row 'dk') and its first enqueue ms (row 'df'; server time, not known exactly). */
  debounceKey: string | null;
  debounced: boolean;
  data: string;
  name: string;
  /**
   * A crash suspect (row 'x'): reaped (its last lease ran out). Complete, fail and throttle
   * clear it; release, retry and every other move keep it.
   */
  suspect: boolean;
}

export interface ModelEvent {
  readonly type: string;
  /** The event's comma-joined ids. */
  readonly ids: string;
  /** Every other field of the entry, exactly. */
  readonly fields: Readonly<Record<string, string>>;
}

export type When = 'now' | 'delay' | 'runAtPast' | 'runAtFuture' | 'runAtWins';

export interface ResolvedSpec {
  readonly id: string;
  readonly data: string;
  readonly name: string;
  readonly max: number | null;
  readonly backoff: string | null;
  readonly delayMs: number;
  readonly runAtMs: number;
  readonly idem: string | null;
  readonly lane: string;
  readonly level: number;
  readonly timeoutMs: number | null;
  readonly traceContext: string | null;
}

/** One group of an enqueue call: its jobs' outcomes, or refused alone (naming the first clashing id). */
export type GroupPrediction =
  | { readonly kind: 'ok'; readonly outcomes: EnqueueOutcome[] }
  | { readonly kind: 'exists'; readonly id: string };

export type FailMode = 'backoff' | 'now' | 'unrecoverable';

/**
 * How much of dead a fail or reap keeps, as the model sees it: the cap, and the id-time cutoff
 * of the age limit (ids minted before it are too old; null: no age limit). See ./ids.ts.
 */
export interface DeadRule {
  readonly cap: number;
  readonly cutoff: number | null;
}
const DEFAULT_DEAD: DeadRule = { cap: DEAD_RETENTION_DEFAULTS.deadMaxJobs, cutoff: null };

/** A write call whose reply Redis keeps (under emq:{q}:reply:<request id>) for the replay window. */
export interface ReplyRecord {
  readonly requestId: string;
  readonly kind: WriteKind;
  /** The step that made the call. */
  readonly step: number;
}

/** What a claim answers, and why it stopped short (coverage). */
export interface ClaimPrediction {
  jobs: ClaimedJobRecord[];
  /** The walk ended before a crash suspect it could not take (ClaimBatch.suspectAhead). */
  suspectAhead: boolean;
  /** A crash suspect was handed out alone (coverage). */
  alone: boolean;
  /** The call skipped CLAIM_SUSPECTS_SKIPPED_MAX suspects, which ended its walk (coverage). */
  skipsSpent?: boolean;
  nextRunAt: number | null | 'unknown';
  /** limitedUntil is a server instant (held, or the rate window has no room left). */
  limited: boolean;
  stop: 'paused' | 'held' | 'gc' | 'rate' | null;
  walk?: Walk;
}

export { DEFAULT_LANE };

/** Ids compare by their bytes (ASCII), which is mint order, across minters too (DESIGN §2). */
export function byId(a: { readonly id: string }, b: { readonly id: string }): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export class Model {
  /** Jobs ever written. An id minted but never written (its group was refused, or an idempotency
   *  key matched) has a seq but no job: a phantom, which must never get a row or a set. */
  readonly jobs = new Map<string, ModelJob>();
  /** Mint call order of every id this run minted. */
  readonly seqOf = new Map<string, number>();
  readonly idem = new Map<string, string>();
  /** Every claim ever handed out, current or not: the source of stale calls. */
  readonly claims: ClaimRef[] = [];
  /** How each claim that is no longer current ended, by claimant (claimants are unique). */
  readonly endedBy = new Map<
    string,
    'complete' | 'fail' | 'release' | 'reap' | 'remove' | 'throttle' | 'obliterate'
  >();
  readonly metrics: Record<string, number> = {};
  readonly events: ModelEvent[] = [];
  /** Schedules: their definitions and next occurrences (./schedules.ts). */
  readonly schedules = new Schedules();
  /** Debounce and throttle keys (emq:{q}:debounce:<k>, once:<k>): the job each holds, its TTL at most. */
  readonly keyed = new Map<string, { readonly id: string; readonly ttlMs: number }>();
  /** The cancels stream: an entry per removed active job (id, the token of its claim). */
  readonly cancels: { readonly id: string; readonly attempt: string }[] = [];
  /** Reply records that exist, by request id, in call order. */
  readonly replies = new Map<string, ReplyRecord>();
  paused = false;
  /**
   * Lanes, levels, limits and holds (./flow.ts); it sees the jobs through pending / active / take.
   * A fresh one once the queue is obliterated (resetFlow).
   */
  flow = this.newFlow();
  /** While a claim walks: claims up to k jobs of (lane, level). */
  private taking: ((lane: string, level: number, k: number) => Take) | null = null;
  /** Commands run so far (bounds the sequence). */
  steps = 0;
  private nextSeq = 0;
  private tick = 0;

  /**
   * pastBase: a server time well before the run; rewritten scores are pastBase + tick.
   * bulk: a run at the batch maxima (fewer, bigger steps).
   */
  constructor(
    readonly pastBase: number,
    readonly bulk = false,
  ) {}

  private newFlow(): Flow {
    return new Flow({
      pending: (lane, level) => this.pendingIn(lane, level).length,
      active: (lane) => this.activeIn(lane),
      take: (lane, level, k) => {
        if (!this.taking) throw new Error('model: a take outside a claim');
        return this.taking(lane, level, k);
      },
    });
  }

  /**
   * The flow keys are gone (obliterate's last call): a fresh flow model. A lane's rate counts
   * outlive it unless the lane was configured (its settings and counts go lane by lane); the
   * others expire by their own TTL.
   */
  resetFlow(): void {
    const kept = [...this.flow.laneRate].filter(([lane]) => !this.flow.laneSettings.has(lane));
    this.flow = this.newFlow();
    for (const [lane, counted] of kept) this.flow.laneRate.set(lane, counted);
  }

  // ---------------------------------------------------------------- reads

  label(id: string): string {
    const seq = this.seqOf.get(id);
    return seq === undefined ? id : `j${seq}`;
  }

  /** Jobs in one place, in id (= mint) order. */
  inPlace(place: Place): ModelJob[] {
    return [...this.jobs.values()].filter((job) => job.place === place).sort(byId);
  }

  /** Pending jobs of one lane at one level, in id order (one pending set). */
  pendingIn(lane: string, level: number): ModelJob[] {
    return this.inPlace('pending').filter((job) => job.lane === lane && job.level === level);
  }

  activeIn(lane: string): number {
    let n = 0;
    for (const job of this.jobs.values()) if (job.place === 'active' && job.lane === lane) n += 1;
    return n;
  }

  /** Every id this run minted, in mint call order. */
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
      .sort((a, b) => exactScore(a) - exactScore(b) || byId(a, b));
  }

  /** Request ids with a live reply record, in call order. */
  replyIds(): string[] {
    return [...this.replies.keys()];
  }

  describe(): string {
    const ids = this.allIds();
    const rows = ids.slice(0, 60).map((id) => {
      const job = this.jobs.get(id);
      if (!job) return `  ${this.label(id)} ${id} phantom`;
      return (
        `  ${this.label(id)} ${id} ${job.place} ${job.lane}@${job.level} a=${job.attempts} b=${job.base} m=${job.max ?? '-'} w=${job.workerMax ?? '-'}` +
        ` c=${job.claimant ?? '-'} due=${job.due} idem=${job.idem ?? '-'}`
      );
    });
    if (ids.length > 60) rows.push(`  ... and ${ids.length - 60} more`);
    const replies = [...this.replies.values()].map((r) => `${r.requestId}(${r.kind}@${r.step})`);
    const f = this.flow;
    const ready = [...f.ready]
      .filter(([, set]) => set.size > 0)
      .map(([level, set]) => `${level}:${JSON.stringify([...set])}`);
    return [
      `paused=${this.paused} idem=${JSON.stringify([...this.idem])}`,
      `flow: settings=${JSON.stringify(f.settings)} lanes=${JSON.stringify([...f.laneSettings])} ready=${ready.join(' ') || '-'}` +
        ` vtime=${JSON.stringify([...f.vtime])} held=${JSON.stringify([...f.held])} timers=${JSON.stringify([...f.timers])}` +
        ` paused=${JSON.stringify([...f.pausedLanes])} hold=${f.holdMs ?? '-'} waiting=${f.waiting}` +
        ` rate=${JSON.stringify(f.rate)} laneRate=${JSON.stringify([...f.laneRate])}`,
      `replies=${replies.join(' ') || '-'}`,
      ...rows,
    ].join('\n');
  }

  // ---------------------------------------------------------------- bookkeeping

  mint(id: string): void {
    if (this.seqOf.has(id)) throw new Error(`model: id ${id} minted twice`);
    this.seqOf.set(id, this.nextSeq++);
  }

  pastScore(sameInstant: boolean): number {
    if (!sameInstant) this.tick += 1;
    return this.pastBase + this.tick;
  }

  recordReply(requestId: string, kind: WriteKind): void {
    if (this.replies.has(requestId)) throw new Error(`model: request id ${requestId} used twice`);
    this.replies.set(requestId, { requestId, kind, step: this.steps });
  }

  /** The replay window of one call ran out: its reply record is gone. */
  replyExpires(requestId: string): void {
    this.replies.delete(requestId);
  }

  bump(metric: string, by = 1): void {
    if (by > 0) this.metrics[metric] = (this.metrics[metric] ?? 0) + by;
  }

  emit(type: string, ids: readonly string[], fields: Record<string, string> = {}): void {
    if (ids.length > 0) this.events.push({ type, ids: ids.join(','), fields });
  }

  /** A job goes into its lane's pending set at its level, and the lane is offered (into_pending). */
  intoPending(job: ModelJob): void {
    job.place = 'pending';
    this.flow.offer(job.lane, job.level);
  }

  /** Jobs back into pending by their lanes and levels, grouped in first-seen order (pend_by_row). */
  pendByRow(jobs: readonly ModelJob[]): void {
    const groups = new Map<string, ModelJob[]>();
    for (const job of jobs) {
      const at = `${job.level}:${job.lane}`;
      groups.set(at, [...(groups.get(at) ?? []), job]);
    }
    for (const group of groups.values()) {
      for (const job of group) job.place = 'pending';
      this.flow.offer(group[0].lane, group[0].level);
    }
  }

  /** Lanes of jobs leaving active, in first-seen order; restored lanes are noted for coverage. */
  settle(jobs: readonly ModelJob[], by: string): void {
    const lanes = [...new Set(jobs.map((job) => job.lane))];
    for (const lane of this.flow.settle(lanes)) this.restored.push(`${lane} by ${by}`);
  }

  /** Lanes that returned to ready in the last step, and why (coverage). */
  readonly restored: string[] = [];

  /** A refused complete / fail / extend / release: only the 'stale' counter moves. */
  stale(count: number): void {
    this.bump('stale', count);
  }

  get(id: string): ModelJob {
    const job = this.jobs.get(id);
    if (!job) throw new Error(`model: no job ${id}`);
    return job;
  }

  // ---------------------------------------------------------------- transitions

  /**
   * enqueue, in groups (one per caller merged into the call). Each group is all or nothing and
   * refused alone, naming its first id that has a row or was taken earlier in the call;
   * idempotency keys bind in call order across groups, and a refused group binds nothing.
   */
  enqueueGroups(groups: readonly (readonly ResolvedSpec[])[], serverNotBefore: number): GroupPrediction[] {
    const bound = new Map<string, string>();
    const taken = new Set<string>();
    const created: ResolvedSpec[] = [];
    const out = groups.map((group): GroupPrediction => {
      const groupBound = new Map<string, string>();
      const groupTaken = new Set<string>();
      const groupCreated: ResolvedSpec[] = [];
      const outcomes: EnqueueOutcome[] = [];
      for (const spec of group) {
        const existing =
          spec.idem === null
            ? undefined
            : (groupBound.get(spec.idem) ?? bound.get(spec.idem) ?? this.idem.get(spec.idem));
        if (existing !== undefined) {
          outcomes.push({ id: existing, created: false });
          continue;
        }
        const job = this.jobs.get(spec.id);
        if (taken.has(spec.id) || groupTaken.has(spec.id) || (job !== undefined && hasRow(job))) {
          return { kind: 'exists', id: spec.id };
        }
        groupTaken.add(spec.id);
        if (spec.idem !== null) groupBound.set(spec.idem, spec.id);
        groupCreated.push(spec);
        outcomes.push({ id: spec.id, created: true });
      }
      for (const [key, id] of groupBound) bound.set(key, id);
      for (const id of groupTaken) taken.add(id);
      created.push(...groupCreated);
      return { kind: 'ok', outcomes };
    });
    const now = created.filter((spec) => this.create(spec, serverNotBefore));
    this.pendByRow(now.map((spec) => this.get(spec.id)));
    this.bump('enqueued', created.length);
    this.emit(
      'enqueued',
      created.map((spec) => spec.id),
    );
    return out;
  }

  /**
   * A job written outside enqueue (a keyed enqueue): in schedule with the score given, or into
   * pending (score null). A debounced job carries its key ('dk') and first enqueue ('df').
   */
  createJob(spec: {
    id: string;
    data: string;
    name: string;
    lane: string;
    debounceKey: string | null;
    score: Score | null;
    traceContext: string | null;
  }): ModelJob {
    this.create(
      { ...spec, max: null, backoff: null, delayMs: 0, runAtMs: 0, idem: null, level: 0, timeoutMs: null },
      0,
    );
    const job = this.get(spec.id);
    job.debounceKey = spec.debounceKey;
    job.debounced = spec.debounceKey !== null;
    if (spec.score === null) this.intoPending(job);
    else {
      job.place = 'schedule';
      job.score = spec.score;
    }
    return job;
  }

  /** Writes the job's row; true when it is due now (it then goes into pending, see enqueueGroups). */
  private create(spec: ResolvedSpec, serverNotBefore: number): boolean {
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
      backoff: spec.backoff,
      idem: spec.idem,
      lane: spec.lane,
      level: spec.level,
      timeoutMs: spec.timeoutMs,
      traceContext: spec.traceContext,
      workerMax: null,
      place,
      attempts: 0,
      base: 0,
      claimant: null,
      score,
      due: false,
      error: null,
      stack: null,
      result: null,
      progress: null,
      finishedNotBefore: 0,
      keepMs: 0,
      logs: [],
      scheduleKey: null,
      plannedAt: null,
      debounceKey: null,
      debounced: false,
      suspect: false,
    });
    if (place !== 'pending') return false;
    // (not in pending until enqueueGroups puts it there with its lane's offer)
    this.get(spec.id).place = 'gone';
    return true;
  }

  private promoteDue(limit: number): ModelJob[] {
    const due = this.dueIn('schedule').slice(0, limit);
    for (const job of due) {
      job.score = ZERO;
      job.due = false;
    }
    this.pendByRow(due);
    this.bump('promoted', due.length);
    this.emit(
      'promoted',
      due.map((job) => job.id),
    );
    return due;
  }

  /**
   * Would a claim change nothing at all (but record its reply)? Conservative: nothing to
   * promote, no due lane timer, and the queue paused or held, or nothing pending and no limit
   * whose bookkeeping a claim may touch.
   */
  claimIsNoop(promoteLimit: number): boolean {
    const promotes = promoteLimit > 0 && this.dueIn('schedule').length > 0;
    if (promotes || this.flow.dueTimers().length > 0 || this.flow.dueHolds().length > 0) return false;
    if (this.paused || this.flow.holdMs !== null) return true;
    const s = this.flow.settings;
    return this.inPlace('pending').length === 0 && s.gc === undefined && s.rm === undefined;
  }

  /**
   * claim: promotes due jobs, returns lanes whose timers are due; then, unless the queue is
   * paused or held, takes up to `count` jobs within globalConcurrency and the rate window's
   * room, chosen by the flow model's walk (levels, passes, caps: ./flow.ts). The claiming
   * worker's maxAttempts (the built-in default when it gives none) becomes the budget of every
   * claimed job without one of its own, recorded on the row: the latest claim's worker decides.
   * Crash suspects are handed out as `suspects` says: 'any' like the others; 'alone' only as
   * the call's one job (met first it is taken and the walk ends; met later it is skipped);
   * 'none' never (skipped). A skipped suspect stays in pending (suspectAhead), the jobs behind
   * it are taken; at most CLAIM_SUSPECTS_SKIPPED_MAX are skipped per call (then the walk ends),
   * and a lane left with only suspects within reach sits out the rest of the walk.
   */
  claim(
    count: number,
    prefix: string,
    promoteLimit: number,
    deadline: number,
    workerMax: number = BUILT_IN_MAX_ATTEMPTS,
    suspects: SuspectRule = 'any',
  ): ClaimPrediction {
    this.promoteDue(promoteLimit);
    for (const lane of this.flow.lanesDue()) this.restored.push(`${lane} by its timer`);
    const out: ClaimPrediction = {
      jobs: [],
      nextRunAt: this.nextRunAt(),
      limited: false,
      stop: null,
      suspectAhead: false,
      alone: false,
    };
    if (this.paused) return { ...out, stop: 'paused' };
    if (this.flow.holdMs !== null) return { ...out, limited: true, stop: 'held' };
    let want = count;
    let gcCut = false;
    const gc = this.flow.settings.gc;
    if (gc !== undefined) {
      const room = gc - this.inPlace('active').length;
      if (room < want) {
        out.stop = 'gc';
        if (room <= 0) {
          // The next freed slot wakes a worker, when there is work for it.
          if (this.flow.anyReady()) this.flow.waiting = true;
          return out;
        }
        want = room;
        gcCut = true;
      }
    }
    const rateRoom = this.flow.queueRateRoom();
    if (rateRoom !== null) {
      if (rateRoom <= 0) return { ...out, limited: true, stop: 'rate' };
      if (rateRoom < want) out.stop = 'rate';
      want = Math.min(want, rateRoom);
    }
    const jobs: ClaimedJobRecord[] = [];
    let skipLeft = CLAIM_SUSPECTS_SKIPPED_MAX;
    this.taking = (lane, level, k) => {
      const taken: ModelJob[] = [];
      let skipped = 0;
      for (const job of this.pendingIn(lane, level)) {
        if (taken.length >= k || skipLeft === 0 || out.alone) break;
        if (!job.suspect || suspects === 'any') taken.push(job);
        else if (suspects === 'alone' && jobs.length + taken.length === 0) {
          // Met first by a worker that holds nothing else: it runs alone, and the walk ends.
          taken.push(job);
          out.alone = true;
        } else {
          // Skipped, left where it is; the jobs behind it are taken.
          out.suspectAhead = true;
          skipped += 1;
          skipLeft -= 1;
        }
      }
      for (const job of taken) {
        job.place = 'active';
        job.attempts += 1;
        if (job.max === null) job.workerMax = workerMax;
        job.claimant = `${prefix}.${jobs.length}`;
        job.score = { kind: 'exact', value: deadline };
        job.due = false;
        this.claims.push({ id: job.id, attempt: job.attempts, claimant: job.claimant });
        jobs.push(claimedRecord(job));
      }
      const stop = out.alone ? 'alone' : skipped > 0 && taken.length < k ? 'aside' : null;
      if (skipLeft === 0) out.skipsSpent = true;
      return { took: taken.length, stop, spent: skipLeft === 0 };
    };
    try {
      out.walk = this.flow.walk(want);
    } finally {
      this.taking = null;
    }
    // A rate timer the walk set may be the soonest instant to claim again.
    out.nextRunAt = this.nextRunAt();
    if (out.walk.left === 0 && gcCut && this.flow.anyReady()) this.flow.waiting = true;
    this.bump('claimed', jobs.length);
    if (out.alone) this.bump('isolated');
    this.emit(
      'claimed',
      jobs.map((job) => job.id),
    );
    if (jobs.length > 0 && rateRoom !== null) {
      this.flow.countQueueStarts(jobs.length);
      // The call used the window's last room: it says when the next opens.
      if (rateRoom - jobs.length <= 0) out.limited = true;
    }
    return { ...out, jobs };
  }

  /**
   * What a repeat of a claim answers: the jobs that claim still holds, found by the deadline it
   * recorded (their score in active) and its claimant prefix, in id order; and the next run-at now.
   * A job of the claim whose score moved (extended, or its lease rewritten into the past) is not
   * among them.
   */
  claimRepeat(prefix: string, deadline: number): Pick<ClaimPrediction, 'jobs' | 'nextRunAt'> {
    const jobs = this.inPlace('active')
      .filter(
        (job) =>
          job.claimant !== null &&
          job.claimant.startsWith(`${prefix}.`) &&
          job.score.kind === 'exact' &&
          job.score.value === deadline,
      )
      .map(claimedRecord);
    return { jobs, nextRunAt: this.nextRunAt() };
  }

  /**
   * The soonest run-at in schedule or lane timer; 'unknown' (but some) when a delayed score or
   * a timer set from server time is not known exactly.
   */
  private nextRunAt(): number | null | 'unknown' {
    const scheduled = this.inPlace('schedule');
    const timers = [...this.flow.timers.values(), ...this.flow.holds.values()];
    if (scheduled.length === 0 && timers.length === 0) return null;
    if (scheduled.some((job) => job.score.kind !== 'exact') || timers.some((t) => !t.due)) return 'unknown';
    return Math.min(...scheduled.map(exactScore), ...timers.map((t) => (t.due ? t.value : Infinity)));
  }

  /** extend: a held claim's deadline becomes the later of its own and the new one (never shorter). */
  extend(refs: readonly ClaimRef[], deadline: number): boolean[] {
    const extended: string[] = [];
    const held = refs.map((ref) => {
      if (!this.holds(ref)) return false;
      const job = this.get(ref.id);
      if (deadline > exactScore(job)) {
        job.score = { kind: 'exact', value: deadline };
        job.due = false;
      }
      extended.push(ref.id);
      return true;
    });
    this.bump('extended', extended.length);
    this.stale(held.filter((h) => !h).length);
    return held;
  }

  /**
   * Many completions in one call behave as if made one after the other: a claim completes
   * once, and a second completion of it (or of its job) in the same call is stale. A result
   * over EVENT_RESULT_MAX_BYTES, or past the event's total, is left out of the event (null in
   * results, its id in omitted) and its row is kept at least LEFT_OUT_RESULT_KEEP_MS.
   */
  completeMany(
    completions: readonly { claim: ClaimRef; result: string }[],
    keepMs: number,
    serverNotBefore: number,
  ): boolean[] {
    const done: string[] = [];
    const results: string[] = [];
    const omitted: string[] = [];
    let budget = EVENT_RESULTS_TOTAL_MAX_BYTES;
    const finished: ModelJob[] = [];
    const out = completions.map(({ claim, result }) => {
      if (!this.holds(claim)) return false;
      finished.push(this.get(claim.id));
      const bytes = Buffer.byteLength(result);
      const leftOut = bytes > EVENT_RESULT_MAX_BYTES || bytes > budget;
      if (!leftOut) budget -= bytes;
      results.push(result === '' || leftOut ? 'null' : result);
      if (leftOut) omitted.push(claim.id);
      this.finish(
        claim,
        leftOut ? Math.max(keepMs, LEFT_OUT_RESULT_KEEP_MS) : keepMs,
        result,
        serverNotBefore,
      );
      done.push(claim.id);
      return true;
    });
    this.settle(finished, 'complete');
    this.bump('completed', done.length);
    const fields: Record<string, string> = { results: `[${results.join(',')}]` };
    if (omitted.length > 0) fields.omitted = omitted.join(',');
    this.emit('completed', done, fields);
    this.stale(out.filter((ok) => !ok).length);
    return out;
  }

  private finish(ref: ClaimRef, keepMs: number, result: string, serverNotBefore: number): void {
    const job = this.get(ref.id);
    this.endedBy.set(ref.claimant, 'complete');
    job.claimant = null;
    job.suspect = false;
    job.due = false;
    job.score = ZERO;
    if (keepMs > 0) {
      job.place = 'completed';
      job.result = result;
      job.finishedNotBefore = serverNotBefore;
      job.keepMs = keepMs;
    } else {
      job.place = 'gone';
    }
  }

  /** progress: the current claim records progress on the row; no state change. */
  progress(ref: ClaimRef, value: string): void {
    if (!this.holds(ref)) return;
    this.get(ref.id).progress = value;
    this.emit('progress', [ref.id], { progress: value });
  }

  /** The state a fail moves the job to, or 'stale'. Does not change the model. */
  failTarget(ref: ClaimRef, mode: FailMode): 'stale' | 'schedule' | 'pending' | 'dead' {
    if (!this.holds(ref)) return 'stale';
    const job = this.get(ref.id);
    if (mode === 'unrecoverable' || job.attempts - job.base >= budget(job)) return 'dead';
    return mode === 'backoff' ? 'schedule' : 'pending';
  }

  fail(
    ref: ClaimRef,
    mode: FailMode,
    error: string,
    runAt: number,
    dead: DeadRule = DEFAULT_DEAD,
    stack = '',
  ): void {
    const target = this.failTarget(ref, mode);
    if (target === 'stale') {
      this.stale(1);
      return;
    }
    const job = this.get(ref.id);
    this.endedBy.set(ref.claimant, 'fail');
    // Out of active and counted out of its lane first, then into its target set.
    job.place = 'gone';
    this.settle([job], 'fail');
    if (target === 'pending') this.intoPending(job);
    else job.place = target;
    job.claimant = null;
    // The attempt ended in its handler: no crash of its worker.
    job.suspect = false;
    // The row keeps ERROR_TEXT_MAX bytes of the error, the event 1 KiB of that (our texts are ASCII).
    job.error = error.slice(0, ERROR_TEXT_MAX);
    // The script keeps the first ERROR_STACK_MAX bytes of the stack ('' for none: 'es' goes).
    job.stack = stack === '' ? null : Buffer.from(stack).subarray(0, ERROR_STACK_MAX).toString();
    job.due = false;
    job.score = target === 'schedule' ? { kind: 'exact', value: runAt } : ZERO;
    const inEvent =
      job.error.length <= EVENT_ERROR_MAX_BYTES
        ? job.error
        : `${job.error.slice(0, EVENT_ERROR_MAX_BYTES)}...`;
    const type = target === 'dead' ? 'dead' : 'failed';
    this.bump(type);
    this.emit(type, [ref.id], { attempt: String(ref.attempt), error: inEvent });
    if (target === 'dead') this.intoDead([job], dead);
  }

  /** The ids into_dead lets go last (coverage). */
  lastTrimmed: string[] = [];

  /**
   * into_dead (prelude): the jobs are in dead already; dead is trimmed oldest first (id order)
   * while it holds more than the cap or jobs enqueued longer ago than the age limit (their id's
   * time before now - age), at most #jobs + DEAD_TRIM_MAX. A trimmed job's row goes, with its
   * idempotency key when that still points at it.
   */
  intoDead(jobs: readonly ModelJob[], dead: DeadRule): void {
    this.lastTrimmed = [];
    const inDead = this.inPlace('dead');
    const over = inDead.length - dead.cap;
    const cutoff = dead.cutoff;
    const old = cutoff === null ? 0 : inDead.filter((job) => idTime(job.id) < cutoff).length;
    const n = Math.min(jobs.length + DEAD_TRIM_MAX, Math.max(over, old));
    if (n <= 0) return;
    const trimmed = inDead.slice(0, n);
    for (const job of trimmed) this.dropRow(job);
    this.lastTrimmed = trimmed.map((job) => job.id);
    this.bump('trimmed', trimmed.length);
    this.emit('trimmed', this.lastTrimmed);
  }

  /** A row deleted outright (trimmed, drained, cleaned): the job is gone, and its idempotency key when it points at it. */
  dropRow(job: ModelJob): void {
    if (job.idem !== null && this.idem.get(job.idem) === job.id) this.idem.delete(job.idem);
    job.place = 'gone';
    job.claimant = null;
    job.due = false;
    job.score = ZERO;
  }

  /** release: active -> pending; the released claim does not count against the budget. */
  release(refs: readonly ClaimRef[]): boolean[] {
    const released: string[] = [];
    const jobs: ModelJob[] = [];
    const out = refs.map((ref) => {
      if (!this.holds(ref)) return false;
      const job = this.get(ref.id);
      this.endedBy.set(ref.claimant, 'release');
      // (out of active; into pending after its lane is counted out, as the script does)
      job.place = 'gone';
      jobs.push(job);
      job.base += 1;
      job.claimant = null;
      job.score = ZERO;
      job.due = false;
      released.push(ref.id);
      return true;
    });
    this.settle(jobs, 'release');
    this.pendByRow(jobs);
    this.bump('released', released.length);
    this.emit('released', released);
    this.stale(out.filter((ok) => !ok).length);
    return out;
  }

  reap(limit: number, dead: DeadRule = DEFAULT_DEAD): { toPending: number; toDead: number; more: boolean } {
    const due = this.dueIn('active');
    const expired = due.slice(0, limit);
    const toPending: string[] = [];
    const toDead: string[] = [];
    const back: ModelJob[] = [];
    for (const job of expired) {
      job.error = `lease expired during attempt ${job.attempts}`;
      // No handler's error: the stack of an earlier attempt's goes with it.
      job.stack = null;
      // Its worker may have died of it (to pending or to dead alike).
      job.suspect = true;
      this.endedBy.set(job.claimant!, 'reap');
      job.claimant = null;
      job.score = ZERO;
      job.due = false;
      if (job.attempts - job.base >= budget(job)) {
        job.place = 'dead';
        toDead.push(job.id);
      } else {
        job.place = 'gone';
        back.push(job);
        toPending.push(job.id);
      }
    }
    this.settle(expired, 'reap');
    this.pendByRow(back);
    this.bump('reaped', toPending.length);
    this.emit('reaped', toPending);
    this.bump('dead', toDead.length);
    this.emit('dead', toDead, { error: 'lease expired' });
    this.lastTrimmed = [];
    if (toDead.length > 0)
      this.intoDead(
        expired.filter((job) => job.place === 'dead'),
        dead,
      );
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
    this.intoPending(job);
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
    if (was === 'pending') this.flow.drained(job.lane, job.level);
    if (was === 'active') {
      this.settle([job], 'remove');
      this.cancels.push({ id, attempt: String(job.attempts) });
    }
    job.claimant = null;
    job.due = false;
    job.score = ZERO;
    this.bump('removed');
    this.emit('removed', [id], { from: was });
    return was;
  }

  /**
   * throttle: active -> pending without spending the attempt (base + 1, like release); the
   * queue (hold) or the job's lane (timer, out of ready) is held back first; then the job goes
   * into its pending set and its lane is counted out of active. False when stale.
   */
  throttle(ref: ClaimRef, holdMs: number, scope: 'queue' | 'lane'): boolean {
    if (!this.holds(ref)) {
      this.stale(1);
      return false;
    }
    const job = this.get(ref.id);
    this.endedBy.set(ref.claimant, 'throttle');
    job.base += 1;
    job.claimant = null;
    job.suspect = false;
    job.score = ZERO;
    job.due = false;
    if (scope === 'queue') this.flow.throttleQueue(holdMs);
    else this.flow.throttleLane(job.lane);
    this.intoPending(job);
    this.settle([job], 'throttle');
    this.bump('throttled');
    this.emit('throttled', [ref.id], { attempt: String(ref.attempt), ms: String(holdMs), scope });
    return true;
  }

  pauseLane(lane: string): boolean {
    const paused = this.flow.pauseLane(lane);
    if (paused) this.events.push({ type: 'lane-paused', ids: '', fields: { lane } });
    return paused;
  }

  resumeLane(lane: string): boolean {
    const { was, restored } = this.flow.resumeLane(lane);
    if (restored) this.restored.push(`${lane} by resume`);
    if (was) this.events.push({ type: 'lane-resumed', ids: '', fields: { lane } });
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

function claimedRecord(job: ModelJob): ClaimedJobRecord {
  return {
    id: job.id,
    attempt: job.attempts,
    claimant: job.claimant!,
    data: job.data,
    name: job.name,
    maxAttempts: budget(job),
    budgetBase: job.base,
    backoff: job.backoff,
    lane: job.lane,
    priority: job.level,
    timeoutMs: job.timeoutMs,
    ...(job.scheduleKey === null ? {} : { scheduleKey: job.scheduleKey }),
    suspect: job.suspect,
    ...(job.traceContext === null ? {} : { traceContext: job.traceContext }),
  };
}

/**
 * How long a fail with a backoff waits, worked out from the policies themselves: the job's
 * own policy when it has one (fixed; or exponential from its delay, doubling with each
 * failure of the budget, capped, no jitter), else the serving worker's fixed delay.
 */
export function expectedWait(job: ModelJob, attempt: number): number {
  if (job.backoff === null) return LATER_MS;
  const own = JSON.parse(job.backoff) as { type: string; delayMs: number; maxDelayMs?: number };
  if (own.type === 'fixed') return own.delayMs;
  return Math.min(own.maxDelayMs!, own.delayMs * 2 ** Math.max(0, attempt - job.base - 1));
}

/**
 * The size of a job's retry budget: its own, else that of the worker that claimed it last
 * (so fail and reap decide alike wherever they run), else the built-in default.
 */
export function budget(job: ModelJob): number {
  return job.max ?? job.workerMax ?? BUILT_IN_MAX_ATTEMPTS;
}

export function hasRow(job: ModelJob): boolean {
  return job.place !== 'gone';
}

export function exactScore(job: ModelJob): number {
  if (job.score.kind !== 'exact') throw new Error(`model: ${job.id} has no exact score`);
  return job.score.value;
}
