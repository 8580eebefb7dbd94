/**
 * Schedules on a small set of keys: upsert (created / updated / unchanged, replacing a waiting
 * next occurrence or, while one runs, writing the definition only), advance (the compare-and-set
 * of a worker that claimed an occurrence, or of a reaper or a 'skip' replace: stale when the
 * expected occurrence, the digest or the place is wrong, and from a pending one) and remove (the next occurrence goes with it while it waits). Run-ats are chosen by the
 * caller, as the library computes them: here in the future, or just past (due at once).
 */
import {
  advanceScheduleScript,
  buildDefinition,
  removeScheduleScript,
  upsertScheduleScript,
} from '@app/echomq/internal';
import { hasRow, LATER_MS, type Model } from '../reference';
import {
  advanceSchedule,
  definitionSha1,
  occurrencePlace,
  removeSchedule,
  upsertSchedule,
} from '../schedules';
import { count, type System } from '../system';
import { traceContextFor, type TraceSpec } from './enqueue';
import { lostTag, Step } from './step';

export const SCHEDULE_KEYS = ['s0', 's1'] as const;
const PAYLOAD_LIMIT = 1_000_000;

/**
 * Definitions a run upserts: plain; the same timing with a name, a budget and the 'skip'
 * policy (a change that keeps the waiting run-at); and a cron with a chunked payload in lane
 * 'a' at level 1 (a change of timing).
 */
export const DEFINITIONS: readonly string[] = [
  buildDefinition({ everyMs: 60_000 }, { data: { tick: 0 } }, PAYLOAD_LIMIT).text,
  buildDefinition(
    { everyMs: 60_000, missed: 'skip' },
    { data: { tick: 1 }, name: 'tick', maxAttempts: 2 },
    PAYLOAD_LIMIT,
  ).text,
  buildDefinition(
    { cron: '0 * * * *', tz: 'Europe/Paris' },
    { data: { pad: 'é'.repeat(150) }, lane: 'a', priority: 1, timeoutMs: 30_000 },
    PAYLOAD_LIMIT,
  ).text,
];

export type RunAt = 'future' | 'past';

function runAtOf(r: System, when: RunAt, step: number): number {
  return when === 'past' ? r.serverNow - 5_000 : r.serverNow + (1 + (step % 3)) * LATER_MS;
}

export class UpsertSchedule extends Step {
  constructor(
    readonly key: number,
    readonly definition: number,
    readonly when: RunAt,
    readonly node: number,
    readonly lost: boolean,
    /** The upsert's trace context: its new occurrence carries it, and each one it advances to. */
    readonly trace: TraceSpec = 'none',
  ) {
    super();
  }
  applicable(): boolean {
    return true;
  }
  toString(): string {
    const trace = this.trace === 'none' ? '' : ` trace=${this.trace}`;
    return `upsert schedule ${SCHEDULE_KEYS[this.key % SCHEDULE_KEYS.length]} def#${this.definition} run-at ${this.when}${trace}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const key = SCHEDULE_KEYS[this.key % SCHEDULE_KEYS.length];
    const text = DEFINITIONS[this.definition % DEFINITIONS.length];
    const id = r.mint(this.node);
    const runAtMs = runAtOf(r, this.when, m.steps);
    const where = occurrencePlace(m, m.schedules.next.get(key));
    const unchanged = m.schedules.definitions.get(key) === text && where !== 'gone';
    const before = unchanged ? await r.snapshot(m, { ids: [id] }) : null;
    m.mint(id);
    r.note(`   new occurrence ${m.label(id)}`);
    const traceContext = traceContextFor(id, this.trace);
    const call = { key, definition: text, id, runAtMs, ...(traceContext === null ? {} : { traceContext }) };
    const requestId = r.requestId('upsertSchedule');
    const outcome = await r.send(m, {
      kind: 'upsertSchedule',
      requestId,
      lost: this.lost,
      freshIds: [id],
      run: () => upsertScheduleScript(r.ctx, call, requestId),
    });
    const { answer } = upsertSchedule(m, key, text, id, runAtMs, r.serverNow, traceContext);
    count(`schedule: upsert ${answer.outcome} (next ${where})`);
    r.eq(
      m,
      r.value(m, outcome, 'upsert schedule'),
      answer,
      'upsert schedule: outcome, next occurrence, run-at',
    );
    if (before) await r.expectUnchanged(m, before, 0, 'an unchanged upsert');
  }
}

export type Expect = 'current' | 'none' | 'other';

export class AdvanceSchedule extends Step {
  constructor(
    readonly key: number,
    readonly expect: Expect,
    readonly rightDigest: boolean,
    readonly replace: boolean,
    readonly when: RunAt,
    readonly node: number,
    readonly lost: boolean,
    /**
     * The trace context the caller read from the expected occurrence's claim (a worker passes
     * it): the new occurrence carries it when the expected one's row has none or is gone.
     */
    readonly trace: TraceSpec = 'none',
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.schedules.definitions.size > 0 || this.expect === 'none';
  }
  toString(): string {
    const trace = this.trace === 'none' ? '' : ` trace=${this.trace}`;
    return (
      `advance schedule ${SCHEDULE_KEYS[this.key % SCHEDULE_KEYS.length]} expecting ${this.expect}` +
      `${this.rightDigest ? '' : ' (wrong digest)'}${this.replace ? ' replace' : ''} run-at ${this.when}${trace}${lostTag(this.lost)}`
    );
  }
  protected async exec(m: Model, r: System): Promise<void> {
    // Mostly a key that has a schedule.
    const keys = [...m.schedules.definitions.keys()].sort();
    const given = SCHEDULE_KEYS[this.key % SCHEDULE_KEYS.length];
    const key = m.schedules.definitions.has(given) || keys.length === 0 ? given : keys[0];
    const current = m.schedules.next.get(key) ?? null;
    const others = m.allIds().filter((id) => id !== current);
    const expected =
      this.expect === 'current'
        ? current
        : this.expect === 'other' && others.length > 0
          ? others[this.key % others.length]
          : null;
    const stored = m.schedules.definitions.get(key) ?? DEFINITIONS[0];
    const digest = definitionSha1(this.rightDigest ? stored : `${stored} `);
    const id = r.mint(this.node);
    const runAtMs = runAtOf(r, this.when, m.steps);
    // (a context of the run's own, told apart from every upsert's by the id it is made from)
    const traceContext = traceContextFor(id, this.trace);
    const call = { key, expected, digest, id, runAt: runAtMs, replace: this.replace, traceContext };
    const before = await r.snapshot(m, { ids: [id] });
    m.mint(id);
    const where =
      expected === null ? 'none' : `${m.label(expected)} (${m.jobs.get(expected)?.place ?? 'phantom'})`;
    r.note(`   ${key}: expecting ${where}, new occurrence ${m.label(id)}`);
    const requestId = r.requestId('advanceSchedule');
    const outcome = await r.send(m, {
      kind: 'advanceSchedule',
      requestId,
      lost: this.lost,
      freshIds: [id],
      run: () =>
        advanceScheduleScript(
          r.ctx,
          {
            key,
            expectedId: expected,
            digest,
            id,
            runAtMs,
            replace: this.replace,
            ...(traceContext === null ? {} : { traceContext }),
          },
          requestId,
        ),
      recordedIf: (value) => value === 'OK',
    });
    const from = occurrencePlace(m, expected);
    const expectedJob = expected === null ? undefined : m.jobs.get(expected);
    const rowTrace = expectedJob !== undefined && hasRow(expectedJob) ? expectedJob.traceContext : null;
    const predicted = advanceSchedule(m, call, r.serverNow);
    count(`schedule: advance ${predicted} from ${from}${this.replace ? ' (replace)' : ''}`);
    if (predicted === 'OK' && traceContext !== null) {
      count(`schedule: advance given a claimed context, ${rowTrace === null ? 'used' : "the row's kept"}`);
    }
    r.eq(m, r.value(m, outcome, 'advance schedule'), predicted, 'advance schedule');
    if (predicted === 'STALE') await r.expectUnchanged(m, before, 0, 'a stale advance');
  }
}

export class RemoveSchedule extends Step {
  constructor(
    readonly key: number,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.schedules.definitions.size > 0 || this.lost;
  }
  toString(): string {
    return `remove schedule ${SCHEDULE_KEYS[this.key % SCHEDULE_KEYS.length]}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const key = SCHEDULE_KEYS[this.key % SCHEDULE_KEYS.length];
    const exists = m.schedules.definitions.has(key) || m.schedules.next.has(key);
    const before = exists ? null : await r.snapshot(m);
    const next = m.jobs.get(m.schedules.next.get(key) ?? '');
    if (next) r.note(`   its next occurrence ${m.label(next.id)} is ${next.place}`);
    const requestId = r.requestId('removeSchedule');
    const outcome = await r.send(m, {
      kind: 'removeSchedule',
      requestId,
      lost: this.lost,
      run: () => removeScheduleScript(r.ctx, key, requestId),
      recordedIf: (value) => value,
    });
    const predicted = removeSchedule(m, key);
    count(`schedule: remove ${predicted ? `(next ${next?.place ?? 'none'})` : 'of none'}`);
    r.eq(m, r.value(m, outcome, 'remove schedule'), predicted, 'remove schedule: it existed');
    if (before) await r.expectUnchanged(m, before, 0, 'a remove of no schedule');
  }
}
