/**
 * The system under test for one run: a fresh queue on the suite's real Redis, plus the
 * checks that compare what Redis holds with the reference model after every step.
 *
 * Every write call goes through send(): it carries a request id the run chose, so the model
 * knows which reply records must exist, and the call is kept so a later step can repeat it
 * (./commands/repeat.ts). A call sent "with its reply lost" is sent twice at once: the
 * second answer must equal the first and the second call must change nothing.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  JOB_IDS,
  JobExistsError,
  readJobView,
  readJobViews,
  replayWindow,
  SnowflakeMinter,
  StaleJobError,
  toJobView,
  type JobId,
  type ScriptContext,
} from '@app/echomq/internal';
import type { Redis } from 'ioredis';
import { scriptContext } from '../../support/redis';
import {
  budget,
  DEDUPE_KEYS,
  hasRow,
  IDEM_KEYS,
  type Model,
  SET_NAMES,
  type SetName,
  type WriteKind,
} from './reference';
import { checkFlow, flowKeys, pendingSets, readFlow } from './flow-checks';
import { digestKeys, type KeyDigest, type KeyKind, readRows } from './read';
import { ID_CLOCK_START_AGO_MS, ID_TICK_MS } from './ids';
import { checkRow, checkScore, CLOCK_SLACK_MS, type Reporter } from './rows';

/** Every key of the queue by content, with the metrics hash read apart (stale calls bump 'stale'). */
export interface Snapshot {
  readonly keys: Map<string, KeyDigest>;
  readonly metrics: Record<string, string>;
}

/** What a call answered: its value, or the error it threw. */
export type Outcome<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: unknown };

export interface WriteCall<T> {
  readonly kind: WriteKind;
  readonly requestId: string;
  /** Sends the call; every run sends the same arguments with the same request id. */
  readonly run: () => Promise<T>;
  /** The reply of the first send is lost: send again at once and use the second answer. */
  readonly lost: boolean;
  /** Ids minted for this call (their row keys belong in the snapshot between the two sends). */
  readonly freshIds?: readonly string[];
  /**
   * Checks what a later repeat answered, against the first answer and the model as it is then.
   * Default: exactly the first answer.
   */
  readonly checkRepeat?: (m: Model, first: Outcome<T>, again: Outcome<unknown>) => void;
  /** What of an answer a resend must repeat (default: all of it; a claim's serverNow is fresh). */
  readonly comparable?: (value: T) => unknown;
  /** Whether an answer that succeeded was recorded (default: yes; a no-op answer may return first). */
  readonly recordedIf?: (value: T) => boolean;
}

/** A call whose reply Redis recorded: what a repeat step re-sends. */
export interface SentCall {
  readonly kind: WriteKind;
  readonly requestId: string;
  readonly run: () => Promise<unknown>;
  readonly check: (m: Model, again: Outcome<unknown>) => void;
}

/** How often each kind of step and outcome ran, summed over runs (printed with EMQ_MODEL_STATS=1). */
export const coverage = new Map<string, number>();

export function count(what: string, by = 1): void {
  coverage.set(what, (coverage.get(what) ?? 0) + by);
}

export async function settle<T>(call: Promise<T>): Promise<Outcome<T>> {
  try {
    return { ok: true, value: await call };
  } catch (error) {
    return { ok: false, error };
  }
}

/** Did the script run and record its reply? (A refused remove / retry and a refused argument did not.) */
function recorded(kind: WriteKind, outcome: Outcome<unknown>): boolean {
  if (outcome.ok) return true;
  if (outcome.error instanceof JobExistsError) return kind === 'enqueue';
  if (outcome.error instanceof StaleJobError)
    return kind === 'complete' || kind === 'fail' || kind === 'throttle';
  return false;
}

export class System implements Reporter {
  /** What ran in this run, with ids resolved: printed with any failure. */
  readonly trace: string[] = [];
  /** Calls whose reply Redis recorded, by request id. */
  readonly sent = new Map<string, SentCall>();
  private calls = 0;
  /** Highest attempts seen per id: attempts never decreases (invariant 3). */
  readonly seenAttempts = new Map<string, number>();
  /** The last id each minter issued: each one's ids strictly increase. */
  private readonly lastMinted = new Map<number, string>();

  private constructor(
    readonly redis: Redis,
    readonly ctx: ScriptContext,
    private readonly minters: readonly (() => string)[],
    /** Server time at the last check (ms); every later transition runs at or after it. */
    public serverNow: number,
  ) {}

  static async open(redis: Redis, queue: string, replayWindowMs: number | undefined): Promise<System> {
    const base = scriptContext(redis, queue);
    const ctx: ScriptContext = replayWindowMs === undefined ? base : { ...base, replayWindowMs };
    return new System(redis, ctx, runMinters(), await serverTime(redis));
  }

  /** The replay window of this run's context. */
  get window(): number {
    return replayWindow(this.ctx);
  }

  /** A fresh id from one of the run's minters (two Snowflake nodes, interleaved by the steps). */
  mint(node: number): string {
    const which = node % this.minters.length;
    const id = this.minters[which]();
    const last = this.lastMinted.get(which);
    if (last !== undefined && !(id > last)) {
      throw new Error(`minter ${which} issued ${id} after ${last}: ids of one node must increase`);
    }
    this.lastMinted.set(which, id);
    return id;
  }

  /** A request id unique to this call. */
  requestId(kind: WriteKind): string {
    this.calls += 1;
    return `${kind}:${this.calls}`;
  }

  /**
   * A claimant prefix (the claim's request id) unique to this call: worker name + call number,
   * sometimes with dots, so that one prefix can extend another ('w0.1' and 'w0.1.2'): a repeated
   * claim must take exactly its own jobs (the 'found by the model' case in model.spec.ts).
   */
  claimantPrefix(worker: number): string {
    this.calls += 1;
    return this.calls % 3 === 0 ? `w${worker}.${this.calls}` : `w${worker}:${this.calls}`;
  }

  note(line: string): void {
    this.trace.push(line);
  }

  fail(m: Model, message: string): never {
    const trace = this.trace.length > 400 ? ['...', ...this.trace.slice(-400)] : this.trace;
    throw new Error(
      `${message}\n--- steps (job labels jN are mint call order) ---\n${trace.join('\n')}\n` +
        `--- model ---\n${m.describe()}`,
    );
  }

  eq(m: Model, actual: unknown, expected: unknown, what: string): void {
    if (!isDeepStrictEqual(actual, expected)) this.fail(m, `${what}\n${difference(actual, expected)}`);
  }

  /** Runs a call the model says must be refused, checks the error, returns it. */
  async rejects<E extends Error>(
    m: Model,
    call: Promise<unknown>,
    type: abstract new (...args: never[]) => E,
    what: string,
  ): Promise<E> {
    return this.refused(m, await settle(call), type, what);
  }

  /** Checks that an outcome is the refusal the model predicts, and returns its error. */
  refused<E extends Error>(
    m: Model,
    outcome: Outcome<unknown>,
    type: abstract new (...args: never[]) => E,
    what: string,
  ): E {
    if (outcome.ok) this.fail(m, `${what}: expected ${type.name}, but the call succeeded`);
    if (outcome.error instanceof type) return outcome.error;
    return this.fail(m, `${what}: expected ${type.name}, got ${String(outcome.error)}`);
  }

  /** The value of an outcome the model says succeeds. */
  value<T>(m: Model, outcome: Outcome<T>, what: string): T {
    if (!outcome.ok) this.fail(m, `${what}: expected success, got ${String(outcome.error)}`);
    return outcome.value;
  }

  /**
   * A time a script took from the server clock is about the server time of the last check
   * (generous: it catches a wrong unit or an offset, and does not trip on a clock step on the host).
   */
  isServerTime(m: Model, value: number, what: string): void {
    if (Math.abs(value - this.serverNow) > CLOCK_SLACK_MS) {
      this.fail(m, `${what} is ${value}, but the server clock read ${this.serverNow}`);
    }
  }

  // ---------------------------------------------------------------- write calls (invariant 9)

  /**
   * Sends one write call. With `lost`, the first answer is dropped as if the connection broke
   * before it arrived: the call goes again with the same request id, must answer the same and
   * change nothing more (every key, metrics included). Returns the answer the model goes by.
   */
  async send<T>(m: Model, call: WriteCall<T>): Promise<Outcome<T>> {
    const first = await settle(call.run());
    if (call.lost) {
      count(`lost reply: ${call.kind}${first.ok ? '' : ' (refused)'}`);
      const what = `${call.kind} ${call.requestId} sent again after its reply was lost`;
      const mid = await this.snapshot(m, { ids: call.freshIds, replies: [call.requestId] });
      const again = await settle(call.run());
      const view = (o: Outcome<T>): unknown =>
        o.ok && call.comparable ? { ok: true, value: call.comparable(o.value) } : o;
      this.eq(m, plain(view(again)), plain(view(first)), `${what}: the answer differs from the first`);
      await this.expectUnchanged(m, mid, 0, what);
    }
    if (recorded(call.kind, first) && (!first.ok || !call.recordedIf || call.recordedIf(first.value))) {
      m.recordReply(call.requestId, call.kind);
      const check = call.checkRepeat;
      this.sent.set(call.requestId, {
        kind: call.kind,
        requestId: call.requestId,
        run: call.run,
        check: (model, again) => {
          if (check) check(model, first, again);
          else
            this.eq(
              model,
              plain(again),
              plain(first),
              `repeat of ${call.requestId}: the first call's answer`,
            );
        },
      });
    }
    return first;
  }

  // ---------------------------------------------------------------- keys

  private readonly rowKeys = new Map<string, string>();

  private rowKey(id: string): string {
    let key = this.rowKeys.get(id);
    if (key === undefined) {
      key = this.ctx.keys.job(id);
      this.rowKeys.set(id, key);
    }
    return key;
  }

  /** Every key a script of this queue can write, given the ids this run minted and the replies recorded. */
  knownKeys(m: Model, extra: SnapshotExtra = {}): string[] {
    const k = this.ctx.keys;
    const replies = new Set([...m.replyIds(), ...(extra.replies ?? [])]);
    return [
      ...SET_NAMES.map((set) => k.set(set)),
      ...this.flowKeyList,
      k.events,
      k.cancels,
      k.schedulers,
      k.schedulerNext,
      k.wake,
      k.paused,
      ...[...m.allIds(), ...(extra.ids ?? [])].map((id) => this.rowKey(id)),
      ...IDEM_KEYS.map((key) => k.idempotency(key)),
      ...DEDUPE_KEYS.flatMap((key) => [k.debounce(key), k.throttleKey(key)]),
      ...[...replies].map((id) => k.reply(id)),
    ];
  }

  // ---------------------------------------------------------------- snapshots (refused calls change nothing)

  /**
   * Reads every known key by content (a digest of it; see ./read.ts). Not DUMP: a large hash's
   * serialised order can change when Redis rehashes it incrementally during a mere read.
   */
  async snapshot(m: Model, extra: SnapshotExtra = {}): Promise<Snapshot> {
    return this.read(this.knownKeys(m, extra));
  }

  /** The flow keys (lane pending sets, ready sets, held, timers, limits...) and their types. */
  private get flowKinds(): Map<string, KeyKind> {
    if (!this.flowKindMap) {
      const k = this.ctx.keys;
      this.flowKindMap = new Map<string, KeyKind>([
        ...pendingSets(k).map(({ key }) => [key, 'zset'] as [string, KeyKind]),
        ...flowKeys(k).map(({ key, kind }) => [key, kind] as [string, KeyKind]),
      ]);
      this.flowKindMap.delete(k.pending);
    }
    return this.flowKindMap;
  }
  private flowKindMap: Map<string, KeyKind> | null = null;

  private get flowKeyList(): string[] {
    return [...this.flowKinds.keys()];
  }

  /** The type each known key has when it exists. */
  private kindOf(key: string): KeyKind {
    const k = this.ctx.keys;
    if (key.startsWith(k.jobPrefix)) return 'hash';
    const flow = this.flowKinds.get(key);
    if (flow) return flow;
    if (key === k.events || key === k.cancels) return 'stream';
    if (key === k.schedulers || key === k.schedulerNext) return 'hash';
    if (key === k.wake) return 'list';
    if ((SET_NAMES as readonly string[]).some((set) => key === k.set(set as SetName))) return 'zset';
    return 'string';
  }

  private async read(keys: readonly string[]): Promise<Snapshot> {
    const [digests, metrics] = await Promise.all([
      digestKeys(
        this.redis,
        keys.map((key) => ({ key, kind: this.kindOf(key) })),
      ),
      this.redis.hgetall(this.ctx.keys.metrics),
    ]);
    const states = new Map<string, KeyDigest>();
    keys.forEach((key, i) => states.set(key, digests[i]));
    return { keys: states, metrics };
  }

  /** After a call the model says is refused, repeated or a no-op: nothing changed but `stale` (+staleDelta). */
  async expectUnchanged(m: Model, before: Snapshot, staleDelta: number, what: string): Promise<void> {
    const after = await this.read([...before.keys.keys()]);
    for (const [key, was] of before.keys) {
      const now = after.keys.get(key)!;
      if (now.content !== was.content) {
        const [shown] = await digestKeys(this.redis, [{ key, kind: this.kindOf(key) }], true);
        this.fail(
          m,
          `${what} changed ${key}, but it must change nothing` +
            `\n  before ${was.content === null ? 'absent' : 'present'}\n  after  ${String(shown.content)}`,
        );
      }
      // A retained row's or a reply record's TTL only runs down; such a call must not renew or drop it.
      const ttlOk = was.pttl < 0 ? now.pttl === was.pttl : now.pttl > 0 && now.pttl <= was.pttl;
      if (!ttlOk) this.fail(m, `${what} changed the TTL of ${key} (${was.pttl} -> ${now.pttl})`);
    }
    const expected = { ...before.metrics };
    if (staleDelta > 0) expected.stale = String(Number(expected.stale ?? 0) + staleDelta);
    this.eq(m, after.metrics, expected, `${what}: metrics may only count the stale call`);
  }

  // ---------------------------------------------------------------- the invariants, after every step

  async verify(m: Model): Promise<void> {
    const k = this.ctx.keys;
    const ids = m.allIds();
    const replies = m.replyIds();
    const pipe = this.redis.pipeline();
    pipe.time();
    // Every set a job can be in: each lane's pending set at each level, then active, schedule, dead.
    const sets: { set: SetName; key: string; lane: string; level: number }[] = [
      ...pendingSets(k).map((p) => ({ set: 'pending' as const, ...p })),
      ...SET_NAMES.filter((set) => set !== 'pending').map((set) => ({
        set,
        key: k.set(set),
        lane: '',
        level: 0,
      })),
    ];
    for (const { key } of sets) pipe.zrange(key, 0, -1, 'WITHSCORES');
    pipe.hgetall(k.metrics);
    pipe.xrange(k.events, '-', '+');
    pipe.xrange(k.cancels, '-', '+');
    pipe.hgetall(k.schedulers).hgetall(k.schedulerNext);
    pipe.exists(k.paused);
    pipe.exists(k.fence);
    pipe.keys(`${k.base}*`);
    readFlow(pipe, k);
    for (const key of IDEM_KEYS) pipe.get(k.idempotency(key)).pttl(k.idempotency(key));
    for (const id of replies) pipe.pttl(k.reply(id));
    const keyed = DEDUPE_KEYS.flatMap((key) => [k.debounce(key), k.throttleKey(key)]);
    for (const key of keyed) pipe.get(key).pttl(key);
    // Rows as bytes: a payload is stored in chunks that may split a UTF-8 character. (Read right
    // after the pipeline on the same connection, so nothing of this queue runs in between.)
    const [piped, rowReads] = await Promise.all([
      pipe.exec(),
      readRows(
        this.redis,
        ids.map((id) => this.rowKey(id)),
      ),
    ]);
    const res = unwrap(piped);
    let at = 0;
    const next = (): unknown => res[at++];

    const [sec, usec] = next() as [string, string];
    const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);

    // Invariant 1 (one set at most) and the members of each set, in order.
    const where = new Map<
      string,
      { set: SetName; score: number; key: string; lane: string; level: number }
    >();
    const order = new Map<string, string[]>();
    const pendingCounts = new Map<string, number>();
    for (const { set, key, lane, level } of sets) {
      const flat = next() as string[];
      const members: string[] = [];
      order.set(key, members);
      for (let i = 0; i < flat.length; i += 2) {
        const id = flat[i];
        const other = where.get(id);
        if (other) this.fail(m, `invariant 1: ${m.label(id)} is in both ${other.key} and ${key}`);
        where.set(id, { set, score: Number(flat[i + 1]), key, lane, level });
        members.push(id);
        if (!m.seqOf.has(id)) this.fail(m, `${key} holds ${id}, an id this run never enqueued`);
      }
      if (set === 'pending') pendingCounts.set(`${level}:${lane}`, members.length);
    }
    const metrics = next() as Record<string, string>;
    const events = next() as [string, string[]][];
    const cancels = next() as [string, string[]][];
    const schedulers = next() as Record<string, string>;
    const schedulerNext = next() as Record<string, string>;
    const paused = next() as number;
    const fence = next() as number;
    const presentKeys = next() as string[];
    checkFlow(this, m, next, now, pendingCounts);
    const rows = new Map(ids.map((id, i) => [id, rowReads[i]]));

    if (fence !== 0) this.fail(m, `the fence key ${k.fence} exists; it must never exist`);

    // Invariant 2: every member of a set has its row.
    for (const [id, { set }] of where) {
      if (Object.keys(rows.get(id)!.fields).length === 0) {
        this.fail(m, `invariant 2: ${m.label(id)} is in ${set} but has no row`);
      }
    }

    for (const id of ids) {
      const row = rows.get(id)!;
      const hasFields = Object.keys(row.fields).length > 0;
      const job = m.jobs.get(id);
      if (!job) {
        if (hasFields || where.has(id)) this.fail(m, `${m.label(id)} was never created but exists in Redis`);
        continue;
      }
      const inSet = where.get(id);
      const actual = inSet ? inSet.set : hasFields ? 'completed' : 'gone';
      if (actual !== job.place) {
        const why =
          actual === 'completed' ? 'invariant 2: the row of an unfinished job is outside every set' : 'state';
        this.fail(m, `${why}: ${m.label(id)} is ${actual} in Redis, ${job.place} in the model`);
      }
      if (inSet && inSet.set === 'pending' && (inSet.lane !== job.lane || inSet.level !== job.level)) {
        this.fail(
          m,
          `${m.label(id)} is in the pending set of (${inSet.level}, ${inSet.lane}), its row says (${job.level}, ${job.lane})`,
        );
      }
      if (hasRow(job)) checkRow(this, m, job, row.fields, row.pttl, now);
      if (inSet) checkScore(this, m, job, inSet.score, now);
    }

    // Score-0 sets are in byte order, which is mint order across both minters.
    for (const { set, key, lane, level } of sets) {
      if (set !== 'pending' && set !== 'dead') continue;
      const expected = (set === 'dead' ? m.inPlace('dead') : m.pendingIn(lane, level)).map((job) => job.id);
      const actual = order.get(key)!;
      this.eq(m, actual.map(m.label.bind(m)), expected.map(m.label.bind(m)), `${key} order`);
      this.eq(m, [...actual].sort(), actual, `${key} is not in byte order`);
    }

    const expectedMetrics: Record<string, string> = {};
    for (const [name, value] of Object.entries(m.metrics)) expectedMetrics[name] = String(value);
    this.eq(m, metrics, expectedMetrics, 'metrics (one counter bump per transition)');

    const actualEvents = events.map(([, flat]) => pairs(flat));
    const expectedEvents = m.events.map((e) => ({ type: e.type, ids: e.ids, ...e.fields }));
    if (!isDeepStrictEqual(actualEvents, expectedEvents)) {
      this.eq(
        m,
        actualEvents.map((e) => labelledEvent(m, e)),
        expectedEvents.map((e) => labelledEvent(m, e)),
        'event stream (one event per transition, in order, every field)',
      );
    }

    this.eq(
      m,
      cancels.map(([, flat]) => labelledEvent(m, pairs(flat))),
      m.cancels.map((c) => ({ id: m.label(c.id), attempt: c.attempt })),
      'cancels stream (an entry per removed active job: id, the token of its claim)',
    );

    this.eq(m, schedulers, Object.fromEntries(m.schedules.definitions), 'schedulers (key -> definition)');
    this.eq(
      m,
      schedulerNext,
      Object.fromEntries(m.schedules.next),
      'scheduler-next (key -> next occurrence)',
    );
    // Exactly one next occurrence: per schedule key, at most one occurrence never run yet waits
    // in schedule, and scheduler-next names it (or names one that left the schedule set).
    const waiting = new Map<string, string[]>();
    for (const [id, { set }] of where) {
      const key = rows.get(id)!.fields.sk?.toString();
      if (set !== 'schedule' || key === undefined || (rows.get(id)!.fields.a?.toString() ?? '0') !== '0')
        continue;
      waiting.set(key, [...(waiting.get(key) ?? []), id]);
    }
    for (const [key, list] of waiting) {
      if (list.length > 1 || schedulerNext[key] !== list[0]) {
        this.fail(
          m,
          `schedule ${key}: occurrences ${list.map(m.label.bind(m)).join(',')} wait in schedule, scheduler-next names ${schedulerNext[key] === undefined ? 'none' : m.label(schedulerNext[key])}`,
        );
      }
    }

    this.eq(m, paused === 1, m.paused, 'pause flag');

    for (const key of IDEM_KEYS) {
      const value = next() as string | null;
      const pttl = next() as number;
      this.eq(m, value, m.idem.get(key) ?? null, `idempotency key ${key}`);
      if (value !== null && pttl <= 0) this.fail(m, `idempotency key ${key} has no TTL (${pttl})`);
    }

    // Invariant 9: every call that ran keeps its reply for the replay window, no longer.
    for (const id of replies) {
      const pttl = next() as number;
      if (!(pttl > 0 && pttl <= this.window)) {
        this.fail(m, `reply record of ${id} has PTTL ${pttl}, expected in (0, ${this.window}]`);
      }
    }

    for (const key of keyed) {
      const value = next() as string | null;
      const pttl = next() as number;
      const held = m.keyed.get(key);
      this.eq(m, value, held?.id ?? null, `${key}: the job it holds`);
      if (held && !(pttl > 0 && pttl <= held.ttlMs))
        this.fail(m, `${key} has PTTL ${pttl}, expected in (0, ${held.ttlMs}]`);
    }

    // Nothing outside the known keys: no row of an unknown id, no stray structure. Reply
    // records are the only keys the replay-safe scripts added.
    const known = new Set([...this.knownKeys(m), k.metrics]);
    const stray = presentKeys.filter((key) => !known.has(key));
    if (stray.length > 0) this.fail(m, `unexpected keys ${JSON.stringify(stray.slice(0, 20))}`);

    this.serverNow = now;
  }

  /** The job view (a read script: state, score, row) agrees with the model for every id of the run. */
  async verifyViews(m: Model): Promise<void> {
    const ids = m.allIds();
    // Half through the pipelined reader, half one by one: both must agree with the model.
    const half = Math.ceil(ids.length / 2);
    const views = [
      ...(await readJobViews(this.ctx, ids.slice(0, half))),
      ...(await Promise.all(ids.slice(half).map((id) => readJobView(this.ctx, id)))),
    ];
    ids.forEach((id, i) => {
      const job = m.jobs.get(id);
      const view = views[i];
      const who = `job view of ${m.label(id)}`;
      if (!job || !hasRow(job)) {
        this.eq(m, [view.state, view.score, view.fields], ['unknown', null, {}], who);
        return;
      }
      this.eq(m, view.state, job.place, `${who}: state`);
      const inSet = job.place !== 'completed';
      if (!inSet) this.eq(m, view.score, null, `${who}: score`);
      else if (job.score.kind === 'exact') this.eq(m, view.score, job.score.value, `${who}: score`);
      this.eq(m, view.fields.a ?? '0', String(job.attempts), `${who}: attempts`);
      this.eq(m, view.fields.d, job.data, `${who}: payload (chunks joined)`);
      if (job.place === 'completed') this.eq(m, view.fields.r, job.result ?? '', `${who}: result`);
      // What a reader is told of the budget: the job's own, else its last claiming worker's, else the default.
      const shown = toJobView(this.ctx.keys.queue, id as JobId, view);
      const max = budget(job);
      this.eq(
        m,
        shown && {
          maxAttempts: shown.maxAttempts,
          ownMaxAttempts: shown.ownMaxAttempts,
          attemptsLeft: shown.attemptsLeft,
          backoff: shown.backoff,
        },
        {
          maxAttempts: max,
          ownMaxAttempts: job.max !== null,
          attemptsLeft: Math.max(0, max - (job.attempts - job.base)),
          backoff: job.backoff === null ? undefined : JSON.parse(job.backoff),
        },
        `${who}: budget and backoff as a reader sees them`,
      );
    });
  }

  // ---------------------------------------------------------------- teardown

  async cleanup(steps: number): Promise<void> {
    count(`run length ${String(Math.floor(steps / 10) * 10).padStart(2)}+ steps`);
    const keys = await this.redis.keys(`${this.ctx.keys.base}*`);
    for (let i = 0; i < keys.length; i += 1000) await this.redis.del(...keys.slice(i, i + 1000));
  }
}

/** Ids minted per tick of a run's minting clock. */
const MINTS_PER_MS = 3;

/**
 * Two Snowflake minters, nodes 7 and 8 (two processes), on one clock of the run's own that moves
 * a tick every MINTS_PER_MS ids: ids of both nodes share milliseconds, so byte order
 * (node 7 first within a millisecond) differs from call order, the same way in every replay.
 */
function runMinters(): (() => string)[] {
  const start = Date.now() - ID_CLOCK_START_AGO_MS;
  let minted = 0;
  const clock = (): number => start + Math.floor(minted / MINTS_PER_MS) * ID_TICK_MS;
  return [7, 8].map((node) => {
    const next = JOB_IDS.minter(new SnowflakeMinter(node, clock));
    return () => {
      minted += 1;
      return next();
    };
  });
}

export interface SnapshotExtra {
  /** Ids not yet in the model (minted for the call under test). */
  readonly ids?: readonly string[];
  /** Request ids not yet in the model. */
  readonly replies?: readonly string[];
}

export async function serverTime(redis: Redis): Promise<number> {
  const [sec, usec] = await redis.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

/** An outcome as comparable data: errors by class and message. */
export function plain(value: unknown): unknown {
  if (value instanceof Error) return { error: value.constructor.name, message: value.message };
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, v]) => [key, plain(v)]));
  }
  return value;
}

/** Where two values differ, briefly (the first differing element of long arrays). */
function difference(actual: unknown, expected: unknown): string {
  const show = (v: unknown): string => {
    const text = JSON.stringify(v) ?? String(v);
    return text.length > 1500 ? `${text.slice(0, 1500)}... (${text.length} chars)` : text;
  };
  if (Array.isArray(actual) && Array.isArray(expected)) {
    const i = expected.findIndex((e, j) => !isDeepStrictEqual(actual[j], e));
    const at = i >= 0 ? i : expected.length;
    return (
      `  lengths: expected ${expected.length}, actual ${actual.length}; first difference at [${at}]\n` +
      `  expected ${show(expected[at])}\n  actual   ${show(actual[at])}`
    );
  }
  return `  expected ${show(expected)}\n  actual   ${show(actual)}`;
}

function unwrap(results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw new Error('pipeline was discarded');
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

/** An event entry with its ids (and omitted ids) as job labels. */
function labelledEvent(m: Model, fields: Record<string, string>): Record<string, string> {
  const out = { ...fields };
  for (const name of ['ids', 'omitted', 'id']) {
    if (out[name] !== undefined) out[name] = labels(m, out[name]);
  }
  return out;
}

function labels(m: Model, ids: string): string {
  return ids === '' ? '' : ids.split(',').map(m.label.bind(m)).join(',');
}
