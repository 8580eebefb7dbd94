/**
 * enqueue: groups of jobs in one call (one group per caller merged into it), from a few jobs
 * up to the documented maximum for the whole call. Ids come from two minters (two Snowflake
 * nodes), interleaved, so byte order and mint call order differ within a millisecond.
 */
import { TRACE_CONTEXT_MAX_BYTES } from '@app/echomq/scripts/limits';
import {
  enqueueGroups,
  enqueueJobs,
  JobExistsError,
  type NewJobRecord,
  serialiseBackoff,
} from '@app/echomq/internal';
import {
  type GroupPrediction,
  IDEM_KEYS,
  IDEMPOTENCY_TTL_MS,
  JOB_BACKOFFS,
  LATER_MS,
  type Model,
  type ResolvedSpec,
  type When,
} from '../reference';
import { DEFAULT_LANE, LANES } from '../flow';
import { count, plain, type System } from '../system';

/** A job's own timeout when it has one (only stored and handed back: the model runs no handler). */
const JOB_TIMEOUT_MS = 30_000;

/**
 * The trace context a job's producer leaves on it (row 'tc'): none, a W3C traceparent, or one
 * with a tracestate that fills TRACE_CONTEXT_MAX_BYTES exactly. The scripts store it as given
 * and the claim hands it back; what it means is the tracing code's business (test/tracing).
 */
export type TraceSpec = 'none' | 'parent' | 'max';

export function traceContextFor(id: string, spec: TraceSpec): string | null {
  if (spec === 'none') return null;
  const traceparent = `00-${Buffer.from(id).toString('hex').padEnd(32, '0')}-00f067aa0ba902b7-01`;
  const parent = JSON.stringify({ traceparent });
  if (spec === 'parent') return parent;
  const bare = JSON.stringify({ traceparent, tracestate: 'emq=' });
  return JSON.stringify({
    traceparent,
    tracestate: `emq=${'x'.repeat(TRACE_CONTEXT_MAX_BYTES - bare.length)}`,
  });
}
import { lostTag, MAX_IDS, Step } from './step';

/** A payload of about `bytes` UTF-8 bytes, padded with one filler character. */
export interface PayloadSpec {
  readonly bytes: number;
  /** x: 1 byte; é: 2 bytes; 😀: 4 bytes (so chunk boundaries fall inside characters). */
  readonly filler: 'x' | 'é' | '😀';
}

function payload(id: string, spec: PayloadSpec): string {
  const bare = JSON.stringify({ job: id, pad: '' });
  const missing = spec.bytes - Buffer.byteLength(bare);
  if (missing <= 0) return bare;
  const pad = spec.filler.repeat(Math.ceil(missing / Buffer.byteLength(spec.filler)));
  return JSON.stringify({ job: id, pad });
}

export interface JobSpec {
  readonly when: When;
  readonly payload: PayloadSpec;
  /** The job's own retry budget, or null for none (the claiming worker's then applies). */
  readonly max: number | null;
  /** Which of JOB_BACKOFFS the job carries as its own, or null for none. */
  readonly backoff: number | null;
  readonly named: boolean;
  readonly idem: number | null;
  /**
   * Reuse the id of a job that has a row, or of an earlier job in this call: its group must be
   * refused (all or nothing) unless an idempotency key matches first.
   */
  readonly reuse: number | null;
  /** Which of the two minters mints the id (a group larger than its specs alternates them). */
  readonly node: number;
  /** Which of LANES the job is in (null: none given, the default lane). */
  readonly lane: number | null;
  /** Its priority level, 0..9 (0 is sent as none). */
  readonly priority: number;
  /** With a timeout of its own (row field 't'). */
  readonly timeout: boolean;
  /** Which trace context its producer leaves on it (row field 'tc'). */
  readonly trace: TraceSpec;
}

/** `size` jobs, job i made from specs[i % specs.length]. */
export interface GroupSpec {
  readonly specs: readonly JobSpec[];
  readonly size: number;
}

function showSpec(s: JobSpec): string {
  return (
    `${s.when} max=${s.max ?? 'worker'}${s.backoff === null ? '' : ` backoff#${s.backoff}`}` +
    `${s.named ? ' named' : ''} data~${s.payload.bytes}B${s.payload.filler}` +
    `${s.idem === null ? '' : ` idem=${IDEM_KEYS[s.idem]}`}${s.reuse === null ? '' : ` reuse#${s.reuse}`} n${s.node}` +
    `${s.lane === null ? '' : ` lane=${LANES[s.lane % LANES.length]}`}${s.priority > 0 ? ` y${s.priority}` : ''}` +
    `${s.timeout ? ' timeout' : ''}${s.trace === 'none' ? '' : ` trace=${s.trace}`}`
  );
}

function showGroup(g: GroupSpec): string {
  const specs = g.specs.map(showSpec).join('; ');
  return g.size === g.specs.length ? `[${specs}]` : `${g.size} x [${specs}]`;
}

export class Enqueue extends Step {
  constructor(
    readonly groups: readonly GroupSpec[],
    /** Call through enqueueJobs (one group, throws on a clash) rather than enqueueGroups. */
    readonly single: boolean,
    readonly lost: boolean,
  ) {
    super();
  }
  private get total(): number {
    return this.groups.reduce((n, g) => n + g.size, 0);
  }
  applicable(m: Readonly<Model>): boolean {
    return m.seqOf.size + this.total <= MAX_IDS;
  }
  toString(): string {
    const api = this.single && this.groups.length === 1 ? 'enqueue' : 'enqueue groups';
    return `${api} ${this.groups.map(showGroup).join(' + ')}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const taken = m.withRow().map((job) => job.id);
    const now = r.serverNow;
    const fresh: string[] = [];
    const resolved = this.groups.map((group) =>
      Array.from({ length: group.size }, (_, i): ResolvedSpec => {
        const spec = group.specs[i % group.specs.length];
        let id: string;
        if (spec.reuse !== null && taken.length > 0) {
          id = taken[spec.reuse % taken.length];
        } else {
          id = r.mint(group.size > group.specs.length ? spec.node + i : spec.node);
          fresh.push(id);
          taken.push(id);
        }
        const delayMs = spec.when === 'delay' || spec.when === 'runAtWins' ? LATER_MS : 0;
        const runAtMs =
          spec.when === 'runAtPast' || spec.when === 'runAtWins'
            ? now - 5_000
            : spec.when === 'runAtFuture'
              ? now + 2 * LATER_MS
              : 0;
        return {
          id,
          data: payload(id, spec.payload),
          name: spec.named ? 'mail' : '',
          max: spec.max,
          backoff:
            spec.backoff === null ? null : serialiseBackoff(JOB_BACKOFFS[spec.backoff % JOB_BACKOFFS.length]),
          delayMs,
          runAtMs,
          idem: spec.idem === null ? null : IDEM_KEYS[spec.idem],
          lane: spec.lane === null ? DEFAULT_LANE : LANES[spec.lane % LANES.length],
          level: spec.priority,
          timeoutMs: spec.timeout ? JOB_TIMEOUT_MS : null,
          traceContext: traceContextFor(id, spec.trace),
        };
      }),
    );
    const records: NewJobRecord[][] = resolved.map((group) =>
      group.map((s) => ({
        id: s.id,
        data: s.data,
        name: s.name,
        ...(s.max === null ? {} : { maxAttempts: s.max }),
        ...(s.backoff === null ? {} : { backoff: s.backoff }),
        delayMs: s.delayMs,
        runAtMs: s.runAtMs,
        idempotencyKey: s.idem ?? '',
        // (the default lane is sometimes named outright: the same as none)
        ...(s.lane !== DEFAULT_LANE || s.level % 2 === 1 ? { lane: s.lane } : {}),
        ...(s.level > 0 ? { priority: s.level } : {}),
        ...(s.timeoutMs === null ? {} : { timeoutMs: s.timeoutMs }),
        ...(s.traceContext === null ? {} : { traceContext: s.traceContext }),
      })),
    );
    // A group with no reused id and a job without a key creates something: no snapshot needed.
    const creates = resolved.some(
      (group, g) =>
        group.every((_, i) => this.groups[g].specs[i % this.groups[g].specs.length].reuse === null) &&
        group.some((spec) => spec.idem === null),
    );
    const before = creates ? null : await r.snapshot(m, { ids: fresh });
    if ([...fresh].sort().some((id, i) => id !== fresh[i]))
      count('enqueue: byte order differs from mint call order');
    for (const id of fresh) m.mint(id);
    if (this.total <= 12) {
      r.note(`   ids ${resolved.map((g) => g.map((s) => m.label(s.id)).join(',')).join(' + ')}`);
    } else {
      r.note(`   ids ${m.label(fresh[0] ?? '')}..${m.label(fresh[fresh.length - 1] ?? '')} (${this.total})`);
    }
    const predicted = m.enqueueGroups(resolved, now);
    for (const group of predicted) {
      count(`enqueue group: ${group.kind === 'exists' ? 'refused, id exists' : 'accepted'}`);
      if (group.kind === 'ok' && group.outcomes.some((o) => !o.created))
        count('enqueue: idempotency key matched');
    }
    if (
      predicted.length > 1 &&
      predicted.some((g) => g.kind === 'exists') &&
      predicted.some((g) => g.kind === 'ok')
    )
      count('enqueue groups: one refused alone, others in');
    if (this.total >= 1000) count('enqueue: 1000 jobs in one call');

    const requestId = r.requestId('enqueue');
    if (this.single && records.length === 1) {
      const outcome = await r.send(m, {
        kind: 'enqueue',
        requestId,
        lost: this.lost,
        freshIds: fresh,
        run: () => enqueueJobs(r.ctx, records[0], IDEMPOTENCY_TTL_MS, requestId),
      });
      const [group] = predicted;
      if (group.kind === 'exists') {
        const error = r.refused(m, outcome, JobExistsError, 'enqueue');
        r.eq(m, error.id, group.id, 'JobExistsError names the first clashing id');
      } else {
        r.eq(m, r.value(m, outcome, 'enqueue'), group.outcomes, 'enqueue outcomes');
      }
    } else {
      const outcome = await r.send(m, {
        kind: 'enqueue',
        requestId,
        lost: this.lost,
        freshIds: fresh,
        run: () => enqueueGroups(r.ctx, records, IDEMPOTENCY_TTL_MS, requestId),
      });
      r.eq(
        m,
        plain(r.value(m, outcome, 'enqueue groups')),
        predicted.map(expectedGroup),
        'enqueue group outcomes',
      );
    }
    const nothing = predicted.every((g) => g.kind === 'exists' || g.outcomes.every((o) => !o.created));
    if (nothing && !before) r.fail(m, 'model: an enqueue expected to create jobs creates none');
    if (nothing && before) {
      await r.expectUnchanged(
        m,
        before,
        0,
        'an enqueue that creates nothing (refused, or every key matched)',
      );
    }
  }
}

function expectedGroup(group: GroupPrediction): unknown {
  return group.kind === 'ok' ? plain(group.outcomes) : plain(new JobExistsError(group.id));
}
