/**
 * The system under test for one run: a fresh queue on the suite's real Redis, plus the
 * checks that compare what Redis holds with the reference model after every step.
 */
import { isDeepStrictEqual } from 'node:util';
import { readJobView, readJobViews, type ScriptContext } from '@app/echomq';
import type { Redis } from 'ioredis';
import { scriptContext } from '../../support/redis';
import { hasRow, IDEM_KEYS, type Model, type ModelJob, SET_NAMES, type SetName } from './reference';

/** How far a time a script returns may be from the server time read at the last check. */
const CLOCK_SLACK_MS = 60_000;

/** Row fields the scripts may write (DESIGN §1 / prelude). */
const ROW_FIELDS = new Set(['d', 'n', 'm', 'a', 'b', 'c', 'e', 'r', 'f', 'k', 'p']);

interface KeyState {
  /** The key's content, normalised (a hash's fields sorted), as text; null when the key is absent. */
  readonly content: string | null;
  readonly pttl: number;
}

/** Every key of the queue by content, with the metrics hash read apart (stale calls bump 'stale'). */
export interface Snapshot {
  readonly keys: Map<string, KeyState>;
  readonly metrics: Record<string, string>;
}

/** How often each kind of step and outcome ran, summed over runs (printed with EMQ_MODEL_STATS=1). */
export const coverage = new Map<string, number>();

export function count(what: string): void {
  coverage.set(what, (coverage.get(what) ?? 0) + 1);
}

export class System {
  /** What ran in this run, with ids resolved: printed with any failure. */
  readonly trace: string[] = [];
  private calls = 0;
  /** Highest attempts seen per id: attempts never decreases (invariant 3). */
  private readonly seenAttempts = new Map<string, number>();

  private constructor(
    readonly redis: Redis,
    readonly ctx: ScriptContext,
    readonly mint: () => string,
    /** Server time at the last check (ms); every later transition runs at or after it. */
    public serverNow: number,
  ) {}

  static async open(redis: Redis, queue: string, mint: () => string): Promise<System> {
    const ctx = scriptContext(redis, queue);
    return new System(redis, ctx, mint, await serverTime(redis));
  }

  /** A claimant prefix unique to this call: worker name + call number. */
  claimantPrefix(worker: number): string {
    this.calls += 1;
    return `w${worker}:${this.calls}`;
  }

  note(line: string): void {
    this.trace.push(line);
  }

  fail(m: Model, message: string): never {
    throw new Error(
      `${message}\n--- steps (job labels jN are mint order) ---\n${this.trace.join('\n')}\n` +
        `--- model ---\n${m.describe()}`,
    );
  }

  eq(m: Model, actual: unknown, expected: unknown, what: string): void {
    if (!isDeepStrictEqual(actual, expected)) {
      this.fail(m, `${what}\n  expected ${JSON.stringify(expected)}\n  actual   ${JSON.stringify(actual)}`);
    }
  }

  /** Runs a call the model says must be refused, checks the error, returns it. */
  async rejects<E extends Error>(
    m: Model,
    call: Promise<unknown>,
    type: abstract new (...args: never[]) => E,
    what: string,
  ): Promise<E> {
    try {
      await call;
    } catch (error) {
      if (error instanceof type) return error;
      this.fail(m, `${what}: expected ${type.name}, got ${String(error)}`);
    }
    this.fail(m, `${what}: expected ${type.name}, but the call succeeded`);
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

  // ---------------------------------------------------------------- keys

  private rowKey(id: string): string {
    return this.ctx.keys.job(id);
  }

  /** Every key a script of this queue can write, given the ids this run minted. */
  knownKeys(m: Model, extraIds: readonly string[] = []): string[] {
    const k = this.ctx.keys;
    return [
      ...SET_NAMES.map((set) => k.set(set)),
      k.events,
      k.wake,
      k.paused,
      ...[...m.allIds(), ...extraIds].map((id) => this.rowKey(id)),
      ...IDEM_KEYS.map((key) => k.idempotency(key)),
    ];
  }

  // ---------------------------------------------------------------- snapshots (stale calls change nothing)

  /**
   * Reads every known key by content. (Not DUMP: a large hash's serialised order can change
   * when Redis rehashes it incrementally during a mere read.)
   */
  async snapshot(m: Model, extraIds: readonly string[] = []): Promise<Snapshot> {
    const k = this.ctx.keys;
    const keys = this.knownKeys(m, extraIds);
    const pipe = this.redis.pipeline();
    for (const key of keys) {
      if (key.startsWith(k.jobPrefix)) pipe.hgetallBuffer(key);
      else if ((SET_NAMES as readonly string[]).some((set) => key === k.set(set as SetName))) {
        pipe.zrange(key, 0, -1, 'WITHSCORES');
      } else if (key === k.events) pipe.xrange(key, '-', '+');
      else if (key === k.wake) pipe.lrange(key, 0, -1);
      else pipe.get(key);
      pipe.exists(key).pttl(key);
    }
    pipe.hgetall(k.metrics);
    const res = unwrap(await pipe.exec());
    const states = new Map<string, KeyState>();
    keys.forEach((key, i) => {
      const [value, exists, pttl] = res.slice(3 * i, 3 * i + 3);
      states.set(key, { content: exists === 1 ? normalise(value) : null, pttl: Number(pttl) });
    });
    return { keys: states, metrics: res[res.length - 1] as Record<string, string> };
  }

  /** After a call the model says is refused or a no-op: nothing changed but `stale` (+staleDelta). */
  async expectUnchanged(
    m: Model,
    before: Snapshot,
    staleDelta: number,
    what: string,
    extraIds: readonly string[] = [],
  ): Promise<void> {
    const after = await this.snapshot(m, extraIds);
    for (const [key, was] of before.keys) {
      const now = after.keys.get(key)!;
      if (now.content !== was.content) {
        this.fail(
          m,
          `${what} changed ${key}, but it must change nothing\n  before ${String(was.content).slice(0, 300)}` +
            `\n  after  ${String(now.content).slice(0, 300)}`,
        );
      }
      // A retained row's TTL only runs down; a refused call must not renew or drop it.
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
    const pipe = this.redis.pipeline();
    pipe.time();
    for (const set of SET_NAMES) pipe.zrange(k.set(set), 0, -1, 'WITHSCORES');
    pipe.hgetall(k.metrics);
    pipe.xrange(k.events, '-', '+');
    pipe.exists(k.paused);
    pipe.keys(`${k.base}*`);
    // Rows as bytes: a payload is stored in chunks that may split a UTF-8 character.
    for (const id of ids) pipe.hgetallBuffer(this.rowKey(id)).pttl(this.rowKey(id));
    for (const key of IDEM_KEYS) pipe.get(k.idempotency(key)).pttl(k.idempotency(key));
    const res = unwrap(await pipe.exec());
    let at = 0;
    const next = (): unknown => res[at++];

    const [sec, usec] = next() as [string, string];
    const now = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);

    // Invariant 1 (one set at most) and the members of each set, in order.
    const where = new Map<string, { set: SetName; score: number }>();
    const order = {} as Record<SetName, string[]>;
    for (const set of SET_NAMES) {
      const flat = next() as string[];
      order[set] = [];
      for (let i = 0; i < flat.length; i += 2) {
        const id = flat[i];
        const other = where.get(id);
        if (other) this.fail(m, `invariant 1: ${m.label(id)} is in both ${other.set} and ${set}`);
        where.set(id, { set, score: Number(flat[i + 1]) });
        order[set].push(id);
        if (!m.seqOf.has(id)) this.fail(m, `${set} holds ${id}, an id this run never enqueued`);
      }
    }
    const metrics = next() as Record<string, string>;
    const events = next() as [string, string[]][];
    const paused = next() as number;
    const presentKeys = next() as string[];
    const rows = new Map<string, { fields: Record<string, Buffer>; pttl: number }>();
    for (const id of ids) {
      const fields = next() as Record<string, Buffer>;
      rows.set(id, { fields, pttl: next() as number });
    }

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
      if (hasRow(job)) this.checkRow(m, job, row.fields, row.pttl, now);
      if (inSet) this.checkScore(m, job, inSet.score, now);
    }

    // Invariant 6 (and dead alike): score 0 sets are in mint order, which is byte order.
    for (const set of ['pending', 'dead'] as const) {
      const expected = m.inPlace(set).map((job) => job.id);
      this.eq(m, order[set].map(m.label.bind(m)), expected.map(m.label.bind(m)), `${set} order`);
      this.eq(m, [...order[set]].sort(), order[set], `${set} is not in byte order`);
    }

    const expectedMetrics: Record<string, string> = {};
    for (const [name, value] of Object.entries(m.metrics)) expectedMetrics[name] = String(value);
    this.eq(m, metrics, expectedMetrics, 'metrics (one counter bump per transition)');

    const actualEvents = events.map(([, flat]) => {
      const f = pairs(flat);
      return `${f.type} ${labels(m, f.ids ?? f.id ?? '')}`;
    });
    this.eq(
      m,
      actualEvents,
      m.events.map((e) => `${e.type} ${labels(m, e.ids)}`),
      'event stream (one event per transition, in order)',
    );

    this.eq(m, paused === 1, m.paused, 'pause flag');

    for (const key of IDEM_KEYS) {
      const value = next() as string | null;
      const pttl = next() as number;
      this.eq(m, value, m.idem.get(key) ?? null, `idempotency key ${key}`);
      if (value !== null && pttl <= 0) this.fail(m, `idempotency key ${key} has no TTL (${pttl})`);
    }

    // Nothing outside the known keys: no row of an unknown id, no stray structure.
    const known = new Set([...this.knownKeys(m), k.metrics]);
    const stray = presentKeys.filter((key) => !known.has(key));
    if (stray.length > 0) this.fail(m, `unexpected keys ${JSON.stringify(stray)}`);

    this.serverNow = now;
  }

  private checkRow(m: Model, job: ModelJob, raw: Record<string, Buffer>, pttl: number, now: number): void {
    const who = m.label(job.id);
    const { payload, fields } = this.splitPayload(m, who, raw);
    const attempts = Number(fields.a ?? '0');
    const seen = this.seenAttempts.get(job.id) ?? 0;
    if (attempts < seen)
      this.fail(m, `invariant 3: attempts of ${who} went down from ${seen} to ${attempts}`);
    this.seenAttempts.set(job.id, attempts);

    for (const field of Object.keys(fields)) {
      if (!ROW_FIELDS.has(field)) this.fail(m, `row of ${who} has an unknown field ${field}`);
    }
    if (payload === null || !payload.equals(Buffer.from(job.data))) {
      this.fail(m, `payload of ${who} reads back as ${String(payload?.toString().slice(0, 80))}...`);
    }
    const expected: Record<string, string> = {
      m: String(job.max),
      a: String(job.attempts),
      b: String(job.base),
    };
    if (job.name !== '') expected.n = job.name;
    if (job.idem !== null) expected.k = job.idem;
    if (job.claimant !== null) expected.c = job.claimant;
    if (job.error !== null) expected.e = job.error;
    if (job.place === 'completed') expected.r = job.result ?? '';
    if (job.progress !== null) expected.p = job.progress;
    const { f, ...rest } = fields;
    const actual: Record<string, string> = { ...rest, a: rest.a ?? '0', b: rest.b ?? '0' };
    const differ = [...new Set([...Object.keys(actual), ...Object.keys(expected)])]
      .filter((field) => actual[field] !== expected[field])
      .sort();
    if (differ.length > 0) {
      const what = differ.includes('a')
        ? `invariant 3: attempts of ${who} is ${actual.a}, but it was claimed ${expected.a} times`
        : `row of ${who} differs in ${differ.join(', ')}`;
      this.eq(m, actual, expected, what);
    }

    if (job.place === 'completed') {
      const finished = Number(f);
      if (!(finished >= job.finishedNotBefore - CLOCK_SLACK_MS && finished <= now + CLOCK_SLACK_MS)) {
        this.fail(m, `finished-at of ${who} is ${f}, expected about [${job.finishedNotBefore}, ${now}]`);
      }
      if (!(pttl > 0)) this.fail(m, `retained row of ${who} has no TTL (${pttl})`);
    } else {
      if (f !== undefined) this.fail(m, `${who} is ${job.place} but has a finished-at`);
      if (pttl !== -1) this.fail(m, `${who} is ${job.place} but its row expires (${pttl})`);
    }
  }

  /**
   * Takes the payload out of a row: 'd', then chunks 'd2' .. 'dN' (contiguous, joined as bytes),
   * and 'dn' = N when present. Returns the payload bytes and the other fields as text.
   */
  private splitPayload(
    m: Model,
    who: string,
    raw: Record<string, Buffer>,
  ): { payload: Buffer | null; fields: Record<string, string> } {
    const fields: Record<string, string> = {};
    const chunks = new Map<number, Buffer>();
    let count: string | undefined;
    for (const [name, value] of Object.entries(raw)) {
      const chunk = /^d([0-9]+)$/.exec(name);
      if (name === 'd') chunks.set(1, value);
      else if (chunk) chunks.set(Number(chunk[1]), value);
      else if (name === 'dn') count = value.toString();
      else fields[name] = value.toString();
    }
    if (!chunks.has(1)) return { payload: null, fields };
    const parts: Buffer[] = [];
    for (let i = 1; i <= chunks.size; i++) {
      const part = chunks.get(i);
      if (!part) this.fail(m, `payload chunks of ${who} are not contiguous: ${[...chunks.keys()].join(',')}`);
      parts.push(part);
    }
    if (count !== undefined && Number(count) !== chunks.size) {
      this.fail(m, `payload of ${who} has ${chunks.size} chunks, but dn says ${count}`);
    }
    return { payload: Buffer.concat(parts), fields };
  }

  private checkScore(m: Model, job: ModelJob, score: number, now: number): void {
    const who = `${m.label(job.id)} in ${job.place}`;
    if (job.score.kind === 'exact') {
      this.eq(m, score, job.score.value, `score of ${who}`);
    } else {
      const lo = job.score.notBefore + job.score.delay - CLOCK_SLACK_MS;
      const hi = now + job.score.delay + CLOCK_SLACK_MS;
      if (!(score >= lo && score <= hi))
        this.fail(m, `run-at of ${who} is ${score}, expected in [${lo}, ${hi}]`);
    }
    if (job.place === 'active' || job.place === 'schedule') {
      if (job.due !== score <= now) {
        this.fail(m, `${who}: score ${score} vs server now ${now}, model says due=${job.due}`);
      }
    }
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
    });
  }

  // ---------------------------------------------------------------- teardown

  async cleanup(steps: number): Promise<void> {
    count(`run length ${String(Math.floor(steps / 10) * 10).padStart(2)}+ steps`);
    const keys = await this.redis.keys(`${this.ctx.keys.base}*`);
    if (keys.length > 0) await this.redis.del(...keys);
  }
}

export async function serverTime(redis: Redis): Promise<number> {
  const [sec, usec] = await redis.time();
  return Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
}

function unwrap(results: [Error | null, unknown][] | null): unknown[] {
  if (!results) throw new Error('pipeline was discarded');
  return results.map(([error, value]) => {
    if (error) throw error;
    return value;
  });
}

/** A read reply as comparable text: buffers as hex, a hash's fields sorted. */
function normalise(value: unknown): string {
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && !Buffer.isBuffer(value)) {
    const entries = Object.entries(value as Record<string, Buffer>).map(([f, v]) => [f, v.toString('hex')]);
    return JSON.stringify(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }
  return JSON.stringify(value);
}

function pairs(flat: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) out[flat[i]] = flat[i + 1];
  return out;
}

function labels(m: Model, ids: string): string {
  return ids === '' ? '' : ids.split(',').map(m.label.bind(m)).join(',');
}
