/**
 * Job control of single jobs and of dead: promote job (schedule -> pending now), update (data,
 * run-at, lane, level of a job that is not active) and a chunk of retry all (dead -> pending
 * with a fresh budget). Each takes a request id; a refused call records nothing and changes
 * nothing. The chunked removals (drain, clean, obliterate) are in ./bulk-control.ts.
 */
import {
  buildJobUpdate,
  JobNotFoundError,
  JobStateError,
  promoteJob,
  retryDeadChunk,
  updateJob,
} from '@app/echomq/internal';
import * as control from '../control';
import { LANES } from '../flow';
import { LATER_MS, type Model } from '../reference';
import { count, type System } from '../system';
import { lostTag, type Pool, resolveId, Step } from './step';

export class PromoteJob extends Step {
  constructor(
    readonly pool: Pool,
    readonly index: number,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.seqOf.size > 0;
  }
  toString(): string {
    return `promote job ${this.pool}#${this.index}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const id = resolveId(m, this.pool, this.index);
    const job = m.jobs.get(id);
    r.note(`   job ${m.label(id)} (${job?.place ?? 'phantom'})`);
    const refused = job?.place !== 'schedule';
    const before = refused ? await r.snapshot(m) : null;
    const requestId = r.requestId('promoteJob');
    const outcome = await r.send(m, {
      kind: 'promoteJob',
      requestId,
      lost: this.lost,
      run: () => promoteJob(r.ctx, id, requestId),
    });
    const kind = job?.scheduleKey ? 'an occurrence' : job?.debounced ? 'a debounced job' : 'a job';
    const predicted = control.promoteJob(m, id);
    count(`promote job: ${predicted === 'ok' ? kind : predicted}`);
    if (predicted === 'ok') {
      r.value(m, outcome, 'promote job');
      return;
    }
    const error = r.refused(
      m,
      outcome,
      predicted === 'notScheduled' ? JobStateError : JobNotFoundError,
      'promote job',
    );
    r.eq(m, error.id, id, 'the refusal names the job');
    await r.expectUnchanged(m, before!, 0, `a refused promote job (${predicted})`);
  }
}

/** An update's fields: each left out (null) or one of a few values. */
export interface UpdateSpec {
  /**
   * small (one 63-byte chunk), a few chunks (no count 'dn'), many chunks (with 'dn'), or past
   * the 7000-byte edge (stored whole): a new payload must leave no chunk of the old behind.
   */
  readonly data: null | 'small' | 'few' | 'chunked' | 'large';
  /** A run-at ahead or past, a delay, or a delay of 0 (pending now). */
  readonly when: null | 'future' | 'past' | 'delay' | 'now';
  /** Which of LANES. */
  readonly lane: number | null;
  readonly level: number | null;
}

/** 4-byte characters, so chunk edges fall inside them. */
const PADS = { small: 0, few: 30, chunked: 300, large: 1_800 } as const;

function showUpdate(u: UpdateSpec): string {
  const parts = [
    u.data && `data ${u.data}`,
    u.when && `when ${u.when}`,
    u.lane !== null && `lane ${LANES[u.lane % LANES.length]}`,
    u.level !== null && `level ${u.level}`,
  ];
  return parts.filter(Boolean).join(', ') || 'data small';
}

export class UpdateJob extends Step {
  constructor(
    readonly pool: Pool,
    readonly index: number,
    readonly spec: UpdateSpec,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    // (dead is empty in most steps: an update aimed at it waits for one)
    return this.pool === 'dead' ? m.inPlace('dead').length > 0 : m.seqOf.size > 0;
  }
  toString(): string {
    return `update ${this.pool}#${this.index}: ${showUpdate(this.spec)}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const id = resolveId(m, this.pool, this.index);
    const job = m.jobs.get(id);
    r.note(`   job ${m.label(id)} (${job?.place ?? 'phantom'}${job?.scheduleKey ? ', an occurrence' : ''})`);
    const s = this.spec;
    const empty = s.data === null && s.when === null && s.lane === null && s.level === null;
    const data = empty ? 'small' : s.data;
    // Built as the service builds it (checked, data serialised); the model goes by the record.
    const record = await buildJobUpdate(
      r.ctx.keys.queue,
      {
        ...(data === null ? {} : { data: { updated: m.steps, pad: '😀'.repeat(PADS[data]) } }),
        ...(s.when === 'future' ? { runAt: r.serverNow + 2 * LATER_MS } : {}),
        ...(s.when === 'past' ? { runAt: r.serverNow - LATER_MS } : {}),
        ...(s.when === 'delay' ? { delayMs: LATER_MS } : {}),
        ...(s.when === 'now' ? { delayMs: 0 } : {}),
        ...(s.lane === null ? {} : { lane: LANES[s.lane % LANES.length] }),
        ...(s.level === null ? {} : { priority: s.level }),
      },
      1_000_000,
      undefined,
    );
    const u: control.ModelUpdate = {
      data: record.data,
      runAtMs: record.runAtMs,
      delayMs: record.delayMs,
      lane: record.lane,
      level: record.priority,
    };
    const plan = control.planUpdate(m, id, u, r.serverNow);
    const before = plan.ok ? null : await r.snapshot(m);
    const requestId = r.requestId('updateJob');
    const outcome = await r.send(m, {
      kind: 'updateJob',
      requestId,
      lost: this.lost,
      run: () => updateJob(r.ctx, id, record, requestId),
    });
    if (!plan.ok) {
      count(`update: refused (${plan.refusal})`);
      const type = plan.refusal === 'notFound' ? JobNotFoundError : JobStateError;
      const error = r.refused(m, outcome, type, `update (${plan.refusal})`);
      r.eq(m, error.id, id, 'the refusal names the job');
      await r.expectUnchanged(m, before!, 0, `a refused update (${plan.refusal})`);
      return;
    }
    count(`update: ${plan.from} -> ${plan.target}${job!.scheduleKey ? ' (an occurrence)' : ''}`);
    for (const field of plan.changed) count(`update: changes ${field}`);
    r.eq(m, r.value(m, outcome, 'update'), plan.target, 'update: the state afterwards');
    let runAt: number | null = u.runAtMs ?? null;
    if (plan.target === 'schedule' && u.delayMs !== undefined) {
      // now + delay on the server clock: read back, then known exactly.
      runAt = Number(await r.redis.zscore(r.ctx.keys.schedule, id));
      r.isServerTime(m, runAt - u.delayMs, 'update: the run-at of a delay, less the delay');
    }
    control.applyUpdate(m, job!, u, plan, runAt);
  }
}

export class RetryAll extends Step {
  constructor(
    readonly limit: number,
    readonly evenIfIdle: boolean,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return this.evenIfIdle || m.inPlace('dead').length > 0;
  }
  toString(): string {
    return `retry all: a chunk of ${this.limit}${this.evenIfIdle ? ' (even if idle)' : ''}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const requestId = r.requestId('retryAll');
    const outcome = await r.send(m, {
      kind: 'retryAll',
      requestId,
      lost: this.lost,
      run: () => retryDeadChunk(r.ctx, this.limit, requestId),
    });
    const expected = control.retryAll(m, this.limit);
    count(`retry all: ${expected.count === 0 ? 'none' : expected.more ? 'a chunk, more left' : 'the rest'}`);
    r.eq(m, r.value(m, outcome, 'retry all'), expected, 'retry all: retried and more');
  }
}
