/**
 * The commands of the model-based test. Each is generated without knowing the state
 * (it carries indices and choices), resolves its target against the model when it runs,
 * calls the real script, compares the reply with the model's prediction, and then checks
 * every invariant against Redis. Calls the model predicts to be refused or no-ops are
 * bracketed by snapshots: they must change nothing but the 'stale' counter.
 */
import {
  claimJobs,
  completeJob,
  completeJobs,
  enqueueJobs,
  extendLeases,
  failJob,
  JobExistsError,
  JobNotFoundError,
  JobStateError,
  promoteDue,
  recordProgress,
  reapExpired,
  releaseJobs,
  removeJob,
  retryDead,
  StaleJobError,
  type ClaimRef,
  type NewJobRecord,
} from '@app/echomq';
import fc from 'fast-check';
import {
  type FailMode,
  IDEM_KEYS,
  IDEMPOTENCY_TTL_MS,
  LATER_MS,
  LEASE_MS,
  type Model,
  type Place,
  type ResolvedSpec,
  RETAIN_MS,
  type When,
} from './reference';
import { count, type System } from './system';

type Cmd = fc.AsyncCommand<Model, System>;

/** Steps run per sequence at most; the generated sequence is longer, as some commands do not apply. */
export const MAX_STEPS = 40;

abstract class Step implements Cmd {
  /** Whether the command makes sense in this state (else fast-check skips it). */
  abstract applicable(m: Readonly<Model>): boolean;
  abstract toString(): string;
  protected abstract exec(m: Model, r: System): Promise<void>;

  check(m: Readonly<Model>): boolean {
    return m.steps < MAX_STEPS && this.applicable(m);
  }

  async run(m: Model, r: System): Promise<void> {
    m.steps += 1;
    r.note(`${m.steps}. ${this.toString()}`);
    count(this.constructor.name);
    await this.exec(m, r);
    await r.verify(m);
  }
}

// ------------------------------------------------------------------ picking targets

/** How a complete / fail / extend / release chooses the claim it presents. */
export interface ClaimPick {
  /**
   * current: the current claim of an active job; superseded: a claim that is no longer current
   * (its job was completed, failed, released, reaped or removed since), preferring jobs that are
   * active again under a newer claim; log: any claim ever handed out.
   */
  readonly source: 'current' | 'superseded' | 'log';
  readonly index: number;
  /** Present the claim as is, or tamper with its token or claimant (always stale then). */
  readonly forge: 'none' | 'tokenUp' | 'tokenDown' | 'claimant';
}

function resolveClaim(m: Model, pick: ClaimPick): ClaimRef {
  let ref: ClaimRef;
  const active = m.inPlace('active');
  if (pick.source === 'current' && active.length > 0) {
    const job = active[pick.index % active.length];
    ref = { id: job.id, attempt: job.attempts, claimant: job.claimant! };
  } else if (pick.source === 'superseded' && m.claims.some((c) => !m.holds(c))) {
    const old = m.claims.filter((c) => !m.holds(c));
    const reclaimed = old.filter((c) => m.jobs.get(c.id)?.place === 'active');
    const from = reclaimed.length > 0 && pick.index % 3 !== 0 ? reclaimed : old;
    ref = from[pick.index % from.length];
  } else {
    ref = m.claims[pick.index % m.claims.length];
  }
  switch (pick.forge) {
    case 'none':
      return ref;
    case 'tokenUp':
      return { ...ref, attempt: ref.attempt + 1 };
    case 'tokenDown':
      return { ...ref, attempt: ref.attempt - 1 };
    case 'claimant': {
      // Another worker's claimant (an id unique to some other claim), with this claim's token.
      const other = m.claims.find((c) => c.claimant !== ref.claimant);
      return { ...ref, claimant: other ? other.claimant : `${ref.claimant}x` };
    }
  }
}

function showClaim(m: Model, ref: ClaimRef, pick: ClaimPick): string {
  const place = m.jobs.get(ref.id)?.place ?? 'never created';
  const how =
    pick.forge !== 'none' ? `forged ${pick.forge}` : `ended by ${m.endedBy.get(ref.claimant) ?? 'nothing'}`;
  count(m.holds(ref) ? 'claim presented: current' : `claim presented: stale (${how}, job now ${place})`);
  return `${m.label(ref.id)}@${ref.attempt}/${ref.claimant}${m.holds(ref) ? '' : ' (stale)'}`;
}

export type Pool = Place | 'any';

/** A job id from one state, falling back to any id this run minted. */
function resolveId(m: Model, pool: Pool, index: number): string {
  const candidates = pool === 'any' ? [] : m.inPlace(pool).map((job) => job.id);
  const ids = candidates.length > 0 ? candidates : m.allIds();
  return ids[index % ids.length];
}

// ------------------------------------------------------------------ enqueue

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
  readonly max: number;
  readonly named: boolean;
  readonly idem: number | null;
  /**
   * Reuse the id of a job that has a row, or of an earlier job in this batch: the batch must be
   * refused (all or nothing) unless an idempotency key matches first.
   */
  readonly reuse: number | null;
}

class Enqueue extends Step {
  constructor(readonly specs: readonly JobSpec[]) {
    super();
  }
  applicable(): boolean {
    return true;
  }
  toString(): string {
    const parts = this.specs.map(
      (s) =>
        `${s.when} max=${s.max}${s.named ? ' named' : ''} data~${s.payload.bytes}B${s.payload.filler}` +
        `${s.idem === null ? '' : ` idem=${IDEM_KEYS[s.idem]}`}${s.reuse === null ? '' : ` reuse#${s.reuse}`}`,
    );
    return `enqueue [${parts.join('; ')}]`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const taken = m.withRow().map((job) => job.id);
    const now = r.serverNow;
    const fresh: string[] = [];
    const resolved = this.specs.map((spec): ResolvedSpec => {
      let id: string;
      if (spec.reuse !== null && taken.length > 0) {
        id = taken[spec.reuse % taken.length];
      } else {
        id = r.mint();
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
        delayMs,
        runAtMs,
        idem: spec.idem === null ? null : IDEM_KEYS[spec.idem],
      };
    });
    const records: NewJobRecord[] = resolved.map((s) => ({
      id: s.id,
      data: s.data,
      name: s.name,
      maxAttempts: s.max,
      delayMs: s.delayMs,
      runAtMs: s.runAtMs,
      idempotencyKey: s.idem ?? '',
    }));
    const before = await r.snapshot(m, fresh);
    for (const id of fresh) m.mint(id);
    r.note(`   ids ${resolved.map((s) => m.label(s.id)).join(',')}`);
    const predicted = m.enqueue(resolved, now);
    count(`enqueue: ${predicted.kind === 'exists' ? 'refused, id exists' : 'accepted'}`);
    if (predicted.kind === 'ok' && predicted.outcomes.some((o) => !o.created))
      count('enqueue: idempotency key matched');
    if (predicted.kind === 'exists') {
      const error = await r.rejects(
        m,
        enqueueJobs(r.ctx, records, IDEMPOTENCY_TTL_MS),
        JobExistsError,
        'enqueue',
      );
      if (!predicted.ids.includes(error.id)) {
        r.fail(m, `JobExistsError names ${error.id}, not one of the clashing ids ${predicted.ids.join(',')}`);
      }
      await r.expectUnchanged(m, before, 0, 'a refused enqueue batch');
      return;
    }
    const outcomes = await enqueueJobs(r.ctx, records, IDEMPOTENCY_TTL_MS);
    r.eq(m, outcomes, predicted.outcomes, 'enqueue outcomes');
    if (predicted.outcomes.every((o) => !o.created)) {
      await r.expectUnchanged(m, before, 0, 'an enqueue whose every idempotency key matched');
    }
  }
}

// ------------------------------------------------------------------ claim

class Claim extends Step {
  constructor(
    readonly count: number,
    readonly worker: number,
    readonly promoteLimit: number,
    /** Also when there is nothing to claim or promote (a no-op that must change nothing). */
    readonly evenIfIdle: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return this.evenIfIdle || !m.claimIsNoop();
  }
  toString(): string {
    const idle = this.evenIfIdle ? ' (even if idle)' : '';
    return `claim n=${this.count} by w${this.worker} promote<=${this.promoteLimit}${idle}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const prefix = r.claimantPrefix(this.worker);
    const before = m.claimIsNoop() ? await r.snapshot(m) : null;
    const batch = await claimJobs(r.ctx, {
      count: this.count,
      leaseMs: LEASE_MS,
      claimantPrefix: prefix,
      promoteLimit: this.promoteLimit,
    });
    const due = m.dueIn('schedule').length;
    const paused = m.paused;
    const predicted = m.claim(this.count, prefix, this.promoteLimit, batch.leaseDeadline);
    count(
      `claim: ${paused ? 'paused' : predicted.jobs.length > 0 ? 'got jobs' : 'empty'}${due > 0 ? ', promoted' : ''}`,
    );
    r.note(`   got ${batch.jobs.map((j) => `${m.label(j.id)}@${j.attempt}`).join(',') || 'nothing'}`);
    r.eq(m, batch.jobs, predicted.jobs, 'claimed jobs (pending order, token = attempts + 1)');
    r.isServerTime(m, batch.leaseDeadline - LEASE_MS, 'claim: lease deadline - lease');
    if (predicted.nextRunAt === 'unknown') {
      if (batch.nextRunAt === null) r.fail(m, 'claim reported no next run-at, but schedule is not empty');
    } else {
      r.eq(m, batch.nextRunAt, predicted.nextRunAt, 'claim: next run-at in schedule');
    }
    if (before) await r.expectUnchanged(m, before, 0, 'a claim with nothing to claim or promote');
  }
}

// ------------------------------------------------------------------ complete / fail / extend / release

class Complete extends Step {
  constructor(
    readonly pick: ClaimPick,
    readonly retain: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `complete ${JSON.stringify(this.pick)}${this.retain ? ' retain' : ''}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const ref = resolveClaim(m, this.pick);
    r.note(`   claim ${showClaim(m, ref, this.pick)}`);
    const keep = this.retain ? RETAIN_MS : 0;
    const result = JSON.stringify({ done: ref.attempt });
    if (!m.holds(ref)) {
      const before = await r.snapshot(m);
      const error = await r.rejects(
        m,
        completeJob(r.ctx, ref, result, keep),
        StaleJobError,
        'stale complete',
      );
      r.eq(m, [error.id, error.attempt], [ref.id, ref.attempt], 'StaleJobError names the claim');
      m.complete(ref, keep, result, r.serverNow);
      await r.expectUnchanged(m, before, 1, 'a stale complete');
      return;
    }
    count(`complete: ${m.jobs.get(ref.id)!.due ? 'lease expired, not yet reaped' : 'within lease'}`);
    await completeJob(r.ctx, ref, result, keep);
    m.complete(ref, keep, result, r.serverNow);
  }
}

/** Many completions in one script call (what the worker's completer sends). */
class CompleteMany extends Step {
  constructor(
    readonly picks: readonly ClaimPick[],
    readonly retain: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `complete many ${JSON.stringify(this.picks)}${this.retain ? ' retain' : ''}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const refs = this.picks.map((pick) => resolveClaim(m, pick));
    r.note(`   claims ${refs.map((ref, i) => showClaim(m, ref, this.picks[i])).join(', ')}`);
    const keep = this.retain ? RETAIN_MS : 0;
    const completions = refs.map((claim, i) => ({
      claim,
      result: i % 2 === 0 ? JSON.stringify({ n: i }) : '',
    }));
    const before = refs.some((ref) => m.holds(ref)) ? null : await r.snapshot(m);
    const out = await completeJobs(r.ctx, completions, keep);
    const expected = m.completeMany(completions, keep, r.serverNow);
    r.eq(m, out, expected, 'complete many: completed per claim (false = stale; a claim completes once)');
    if (before) await r.expectUnchanged(m, before, refs.length, 'an all-stale complete');
  }
}

/** A running job reports progress: fenced like complete, no state change. */
class Progress extends Step {
  constructor(readonly pick: ClaimPick) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `progress ${JSON.stringify(this.pick)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const ref = resolveClaim(m, this.pick);
    r.note(`   claim ${showClaim(m, ref, this.pick)}`);
    const value = JSON.stringify({ step: m.steps });
    if (!m.holds(ref)) {
      const before = await r.snapshot(m);
      const error = await r.rejects(m, recordProgress(r.ctx, ref, value), StaleJobError, 'stale progress');
      r.eq(m, [error.id, error.attempt], [ref.id, ref.attempt], 'StaleJobError names the claim');
      // The progress script does not count stale calls (complete / fail / extend / release do).
      await r.expectUnchanged(m, before, 0, 'a stale progress');
      return;
    }
    await recordProgress(r.ctx, ref, value);
    m.progress(ref, value);
  }
}

class Fail extends Step {
  constructor(
    readonly pick: ClaimPick,
    readonly mode: FailMode,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `fail ${JSON.stringify(this.pick)} ${this.mode}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const ref = resolveClaim(m, this.pick);
    r.note(`   claim ${showClaim(m, ref, this.pick)}`);
    const request = {
      error: `boom at step ${m.steps}`,
      backoffMs: this.mode === 'now' ? 0 : LATER_MS,
      unrecoverable: this.mode === 'unrecoverable',
    };
    const target = m.failTarget(ref, this.mode);
    if (target === 'stale') {
      const before = await r.snapshot(m);
      const error = await r.rejects(m, failJob(r.ctx, ref, request), StaleJobError, 'stale fail');
      r.eq(m, [error.id, error.attempt], [ref.id, ref.attempt], 'StaleJobError names the claim');
      m.fail(ref, this.mode, request.error, 0);
      await r.expectUnchanged(m, before, 1, 'a stale fail');
      return;
    }
    count(`fail: -> ${target}`);
    if (m.jobs.get(ref.id)!.base > 0) count('fail: with a moved budget base');
    const outcome = await failJob(r.ctx, ref, request);
    r.eq(m, outcome.state, target, 'fail outcome');
    const runAt = outcome.state === 'schedule' ? outcome.runAt : 0;
    if (outcome.state === 'schedule') r.isServerTime(m, runAt - LATER_MS, 'fail: run-at - backoff');
    m.fail(ref, this.mode, request.error, runAt);
  }
}

class Extend extends Step {
  constructor(readonly picks: readonly ClaimPick[]) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `extend ${JSON.stringify(this.picks)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const refs = this.picks.map((pick) => resolveClaim(m, pick));
    r.note(`   claims ${refs.map((ref, i) => showClaim(m, ref, this.picks[i])).join(', ')}`);
    const before = refs.some((ref) => m.holds(ref)) ? null : await r.snapshot(m);
    const out = await extendLeases(r.ctx, refs, LEASE_MS);
    if (refs.some((ref) => m.holds(ref) && m.jobs.get(ref.id)!.due))
      count('extend: lease expired, not yet reaped');
    const held = m.extend(refs, out.leaseDeadline);
    r.eq(m, out.held, held, 'extend: held per claim (false = stale)');
    if (before) await r.expectUnchanged(m, before, refs.length, 'an all-stale extend');
  }
}

class Release extends Step {
  constructor(readonly picks: readonly ClaimPick[]) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `release ${JSON.stringify(this.picks)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const refs = this.picks.map((pick) => resolveClaim(m, pick));
    r.note(`   claims ${refs.map((ref, i) => showClaim(m, ref, this.picks[i])).join(', ')}`);
    const before = refs.some((ref) => m.holds(ref)) ? null : await r.snapshot(m);
    const out = await releaseJobs(r.ctx, refs);
    const released = m.release(refs);
    r.eq(m, out, released, 'release: released per claim (false = stale)');
    if (before) await r.expectUnchanged(m, before, refs.length, 'an all-stale release');
  }
}

// ------------------------------------------------------------------ reaper / promoter

class Reap extends Step {
  constructor(
    readonly limit: number,
    readonly evenIfIdle: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return this.evenIfIdle || m.dueIn('active').length > 0;
  }
  toString(): string {
    return `reap limit=${this.limit}${this.evenIfIdle ? ' (even if idle)' : ''}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const before = m.dueIn('active').length === 0 ? await r.snapshot(m) : null;
    const out = await reapExpired(r.ctx, this.limit);
    if (m.dueIn('active').some((job) => job.base > 0)) count('reap: with a moved budget base');
    const expected = m.reap(this.limit);
    if (expected.toPending > 0) count('reap: -> pending');
    if (expected.toDead > 0) count('reap: -> dead');
    if (expected.more) count('reap: more left');
    r.eq(m, out, expected, 'reap outcome');
    if (before) await r.expectUnchanged(m, before, 0, 'a reap with no expired lease');
  }
}

class Promote extends Step {
  constructor(
    readonly limit: number,
    readonly evenIfIdle: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return this.evenIfIdle || m.dueIn('schedule').length > 0;
  }
  toString(): string {
    return `promote limit=${this.limit}${this.evenIfIdle ? ' (even if idle)' : ''}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const before = m.dueIn('schedule').length === 0 ? await r.snapshot(m) : null;
    const out = await promoteDue(r.ctx, this.limit);
    const expected = m.promote(this.limit);
    if (expected.promoted > 0) count(`promote: some${expected.more ? ', more left' : ''}`);
    r.eq(m, out, expected, 'promote outcome');
    if (before) await r.expectUnchanged(m, before, 0, 'a promote with nothing due');
  }
}

// ------------------------------------------------------------------ admin: retry / remove

class Retry extends Step {
  constructor(
    readonly pool: Pool,
    readonly index: number,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return this.pool === 'dead' ? m.inPlace('dead').length > 0 : m.seqOf.size > 0;
  }
  toString(): string {
    return `retry ${this.pool}#${this.index}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const id = resolveId(m, this.pool, this.index);
    r.note(`   job ${m.label(id)} (${m.jobs.get(id)?.place ?? 'phantom'})`);
    const before = await r.snapshot(m);
    const predicted = m.retry(id);
    count(`retry: ${predicted}`);
    if (predicted === 'ok') {
      await retryDead(r.ctx, id);
      return;
    }
    const type = predicted === 'notDead' ? JobStateError : JobNotFoundError;
    await r.rejects(m, retryDead(r.ctx, id), type, 'retry');
    await r.expectUnchanged(m, before, 0, `a refused retry (${predicted})`);
  }
}

class Remove extends Step {
  constructor(
    readonly pool: Pool,
    readonly index: number,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.seqOf.size > 0;
  }
  toString(): string {
    return `remove ${this.pool}#${this.index}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const id = resolveId(m, this.pool, this.index);
    r.note(`   job ${m.label(id)} (${m.jobs.get(id)?.place ?? 'phantom'})`);
    const before = await r.snapshot(m);
    const predicted = m.remove(id);
    count(`remove: ${predicted}`);
    if (predicted === 'notFound') {
      await r.rejects(m, removeJob(r.ctx, id), JobNotFoundError, 'remove');
      await r.expectUnchanged(m, before, 0, 'a remove of a job that does not exist');
      return;
    }
    r.eq(m, await removeJob(r.ctx, id), predicted, 'remove: the state the job was in');
  }
}

// ------------------------------------------------------------------ time passing and pausing

/**
 * Time passes for one thing, by moving its deadline into the past on the server's own terms:
 * a lease deadline (active score) or a run-at (schedule score) is rewritten to a past time; a
 * retained row's or an idempotency key's expiry is set to a past instant (PEXPIREAT), which
 * Redis applies at once.
 */
export type Clockwork = 'lease' | 'runAt' | 'retention' | 'idempotency';

function clockworkTargets(m: Readonly<Model>, what: Clockwork): string[] {
  switch (what) {
    case 'lease':
      return m.inPlace('active').map((job) => job.id);
    case 'runAt':
      return m.inPlace('schedule').map((job) => job.id);
    case 'retention':
      return m.inPlace('completed').map((job) => job.id);
    case 'idempotency':
      return [...m.idem.keys()].sort();
  }
}

class PassTime extends Step {
  constructor(
    readonly what: Clockwork,
    readonly index: number,
    readonly sameInstant: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return clockworkTargets(m, this.what).length > 0;
  }
  toString(): string {
    const same = this.sameInstant ? ' (same instant as the last)' : '';
    return `time passes: ${this.what} runs out #${this.index}${same}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const what = this.what;
    count(`time passes: ${what}`);
    const targets = clockworkTargets(m, what);
    const target = targets[this.index % targets.length];
    const past = m.pastScore(this.sameInstant);
    const k = r.ctx.keys;
    r.note(`   ${what} of ${what === 'idempotency' ? target : m.label(target)} -> ${past}`);
    switch (what) {
      case 'lease':
      case 'runAt': {
        const set = what === 'lease' ? k.active : k.schedule;
        await r.redis.zadd(set, 'XX', past, target);
        m.passTime(m.jobs.get(target)!, past);
        return;
      }
      case 'retention':
        await r.redis.pexpireat(k.job(target), past);
        m.retentionEnds(target);
        return;
      case 'idempotency':
        await r.redis.pexpireat(k.idempotency(target), past);
        m.idem.delete(target);
        return;
    }
  }
}

class Pause extends Step {
  constructor(readonly on: boolean) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.paused !== this.on;
  }
  toString(): string {
    return this.on ? 'pause' : 'resume';
  }
  protected async exec(m: Model, r: System): Promise<void> {
    // What QueueService.pause / resume do.
    if (this.on) await r.redis.set(r.ctx.keys.paused, '1');
    else await r.redis.del(r.ctx.keys.paused);
    m.paused = this.on;
  }
}

// ------------------------------------------------------------------ arbitraries

const claimPick: fc.Arbitrary<ClaimPick> = fc.record({
  source: fc.oneof(
    { arbitrary: fc.constant('current' as const), weight: 6 },
    { arbitrary: fc.constant('superseded' as const), weight: 3 },
    { arbitrary: fc.constant('log' as const), weight: 1 },
  ),
  index: fc.nat(15),
  forge: fc.oneof(
    { arbitrary: fc.constant('none' as const), weight: 8 },
    { arbitrary: fc.constantFrom('tokenUp' as const, 'tokenDown' as const, 'claimant' as const), weight: 2 },
  ),
});

/** The value `weight` times in 10, else null. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, weight: number): fc.Arbitrary<T | null> {
  return fc.oneof({ arbitrary: fc.constant(null), weight: 10 - weight }, { arbitrary, weight });
}

/** Mostly small payloads; then sizes around the 63-byte chunk edges and the 7000-byte whole-payload edge. */
const payloadSpec: fc.Arbitrary<PayloadSpec> = fc.record({
  bytes: fc.oneof(
    { arbitrary: fc.constant(0), weight: 6 },
    { arbitrary: fc.constantFrom(63, 64, 126, 127, 252, 253, 254, 316, 700), weight: 3 },
    { arbitrary: fc.constantFrom(6999, 7000, 7001, 7100), weight: 1 },
  ),
  filler: fc.constantFrom('x' as const, 'é' as const, '😀' as const),
});

const jobSpec: fc.Arbitrary<JobSpec> = fc.record({
  payload: payloadSpec,
  when: fc.oneof(
    { arbitrary: fc.constant('now' as const), weight: 6 },
    { arbitrary: fc.constant('delay' as const), weight: 3 },
    {
      arbitrary: fc.constantFrom('runAtPast' as const, 'runAtFuture' as const, 'runAtWins' as const),
      weight: 2,
    },
  ),
  max: fc.integer({ min: 1, max: 3 }),
  named: fc.boolean(),
  idem: sometimes(fc.integer({ min: 0, max: IDEM_KEYS.length - 1 }), 3),
  reuse: sometimes(fc.nat(15), 1),
});

const limit = fc.constantFrom(1, 2, 1000);
/** Now and then a claim / reap / promote runs with nothing to do (and must change nothing). */
const idle = fc.oneof(
  { arbitrary: fc.constant(false), weight: 5 },
  { arbitrary: fc.constant(true), weight: 1 },
);
const pool: fc.Arbitrary<Pool> = fc.constantFrom('pending', 'active', 'schedule', 'dead', 'completed', 'any');

export const commandArbitrary: fc.Arbitrary<Cmd> = fc.oneof(
  { arbitrary: fc.array(jobSpec, { minLength: 1, maxLength: 3 }).map((s) => new Enqueue(s)), weight: 4 },
  {
    arbitrary: fc
      .tuple(fc.integer({ min: 1, max: 3 }), fc.nat(2), fc.constantFrom(1, 1000), idle)
      .map(([n, w, p, i]) => new Claim(n, w, p, i)),
    weight: 7,
  },
  { arbitrary: fc.tuple(claimPick, fc.boolean()).map(([p, keep]) => new Complete(p, keep)), weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.array(claimPick, { minLength: 1, maxLength: 3 }), fc.boolean())
      .map(([p, keep]) => new CompleteMany(p, keep)),
    weight: 2,
  },
  { arbitrary: claimPick.map((p) => new Progress(p)), weight: 1 },
  {
    arbitrary: fc
      .tuple(claimPick, fc.constantFrom<FailMode>('backoff', 'now', 'unrecoverable'))
      .map(([p, mode]) => new Fail(p, mode)),
    weight: 4,
  },
  { arbitrary: fc.array(claimPick, { minLength: 1, maxLength: 3 }).map((p) => new Extend(p)), weight: 2 },
  { arbitrary: fc.array(claimPick, { minLength: 1, maxLength: 3 }).map((p) => new Release(p)), weight: 3 },
  { arbitrary: fc.tuple(limit, idle).map(([l, i]) => new Reap(l, i)), weight: 4 },
  { arbitrary: fc.tuple(limit, idle).map(([l, i]) => new Promote(l, i)), weight: 3 },
  {
    arbitrary: fc
      .tuple(fc.oneof({ arbitrary: fc.constant<Pool>('dead'), weight: 3 }, pool), fc.nat(15))
      .map(([p, i]) => new Retry(p, i)),
    weight: 2,
  },
  { arbitrary: fc.tuple(pool, fc.nat(15)).map(([p, i]) => new Remove(p, i)), weight: 2 },
  {
    arbitrary: fc
      .tuple(
        fc.oneof(
          { arbitrary: fc.constant<Clockwork>('lease'), weight: 4 },
          { arbitrary: fc.constant<Clockwork>('runAt'), weight: 2 },
          { arbitrary: fc.constantFrom<Clockwork>('retention', 'idempotency'), weight: 1 },
        ),
        fc.nat(15),
        fc.boolean(),
      )
      .map(([what, i, same]) => new PassTime(what, i, same)),
    weight: 7,
  },
  { arbitrary: fc.constant(new Pause(true)), weight: 1 },
  { arbitrary: fc.constant(new Pause(false)), weight: 2 },
);
