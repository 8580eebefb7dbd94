/**
 * What a worker sends about its claims: complete (one, or many up to the batch maximum, with
 * results small and large), progress, fail, extend (the heartbeat) and release. Stale claims
 * are presented on purpose; they must change nothing but the 'stale' counter.
 */
import {
  completeJob,
  completeJobs,
  extendLeases,
  failJob,
  recordProgress,
  releaseJobs,
  StaleJobError,
  type ClaimedJobRecord,
  type ClaimRef,
} from '@app/echomq/internal';
import { ERROR_STACK_MAX, EVENT_RESULT_MAX_BYTES } from '@app/echomq/scripts/limits';
import { failRequest } from '@app/echomq/worker/fail-request';
import {
  exactScore,
  expectedWait,
  type FailMode,
  LEASE_MS,
  type Model,
  RETAIN_MS,
  SERVING_BACKOFF,
} from '../reference';
import { count, type System } from '../system';
import { countTrimmed, type DeadKeep, resolveDeadKeep, showDeadKeep } from './dead';
import {
  type ClaimPick,
  lostTag,
  type Picks,
  resolveClaim,
  resolvePicks,
  showClaim,
  showClaims,
  showPicks,
  Step,
} from './step';

/**
 * small: a short JSON; large: over EVENT_RESULT_MAX_BYTES (left out of the event); edge: exactly
 * at the cap and one byte over; budget: 1,000 bytes each (the event's 16 KiB run out after 16);
 * mixed: all of these in turn.
 */
export type ResultKind = 'small' | 'empty' | 'large' | 'edge' | 'budget' | 'mixed';
const MIXED: readonly ResultKind[] = ['small', 'empty', 'large', 'edge', 'budget'];

/** A JSON text of exactly `bytes` bytes. */
function sized(bytes: number, i: number): string {
  const bare = JSON.stringify({ n: i, pad: '' });
  return JSON.stringify({ n: i, pad: 'x'.repeat(Math.max(0, bytes - bare.length)) });
}

function resultText(kind: ResultKind, i: number, attempt: number): string {
  switch (kind) {
    case 'small':
      return JSON.stringify({ done: attempt, n: i });
    case 'empty':
      return '';
    case 'large':
      return sized(EVENT_RESULT_MAX_BYTES + 76 + (i % 3), i);
    case 'edge':
      return sized(EVENT_RESULT_MAX_BYTES + (i % 2), i);
    case 'budget':
      return sized(1_000, i);
    case 'mixed':
      return resultText(MIXED[i % MIXED.length], i, attempt);
  }
}

function countResults(results: readonly string[], keep: number): void {
  if (results.some((text) => Buffer.byteLength(text) > EVENT_RESULT_MAX_BYTES)) {
    count(`complete: a result over ${EVENT_RESULT_MAX_BYTES} B left out of the event, keep ${keep}`);
  }
}

export class Complete extends Step {
  constructor(
    readonly pick: ClaimPick,
    readonly retain: boolean,
    readonly result: ResultKind,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `complete ${JSON.stringify(this.pick)} result=${this.result}${this.retain ? ' retain' : ''}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const ref = resolveClaim(m, this.pick);
    r.note(`   claim ${showClaim(m, ref, this.pick)}`);
    const keep = this.retain ? RETAIN_MS : 0;
    const result = resultText(this.result, 0, ref.attempt);
    const stale = !m.holds(ref);
    const before = stale ? await r.snapshot(m) : null;
    const requestId = r.requestId('complete');
    const outcome = await r.send(m, {
      kind: 'complete',
      requestId,
      lost: this.lost,
      run: () => completeJob(r.ctx, ref, result, keep, requestId),
    });
    if (before) {
      const error = r.refused(m, outcome, StaleJobError, 'stale complete');
      r.eq(m, [error.id, error.attempt], [ref.id, ref.attempt], 'StaleJobError names the claim');
      m.completeMany([{ claim: ref, result }], keep, r.serverNow);
      await r.expectUnchanged(m, before, 1, 'a stale complete');
      return;
    }
    r.value(m, outcome, 'complete');
    count(`complete: ${m.jobs.get(ref.id)!.due ? 'lease expired, not yet reaped' : 'within lease'}`);
    if (m.jobs.get(ref.id)!.suspect) count(`complete: a crash suspect${this.retain ? ', row kept' : ''}`);
    countResults([result], keep);
    m.completeMany([{ claim: ref, result }], keep, r.serverNow);
  }
}

/** Many completions in one script call (what the worker's completer sends), up to the batch maximum. */
export class CompleteMany extends Step {
  constructor(
    readonly picks: Picks,
    readonly retain: boolean,
    readonly result: ResultKind,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `complete many ${showPicks(this.picks)} result=${this.result}${this.retain ? ' retain' : ''}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const refs = resolvePicks(m, this.picks);
    r.note(`   claims ${showClaims(m, refs, this.picks)}`);
    const keep = this.retain ? RETAIN_MS : 0;
    const completions = refs.map((claim, i) => ({
      claim,
      result: resultText(this.result, i, claim.attempt),
    }));
    const before = refs.some((ref) => m.holds(ref)) ? null : await r.snapshot(m);
    const requestId = r.requestId('complete');
    const outcome = await r.send(m, {
      kind: 'complete',
      requestId,
      lost: this.lost,
      run: () => completeJobs(r.ctx, completions, keep, requestId),
    });
    const out = r.value(m, outcome, 'complete many');
    countResults(
      completions.filter((c) => m.holds(c.claim)).map((c) => c.result),
      keep,
    );
    const expected = m.completeMany(completions, keep, r.serverNow);
    if (m.events.at(-1)?.fields.omitted !== undefined && this.result === 'budget') {
      count('complete many: the event ran out of its results budget');
    }
    r.eq(m, out, expected, 'complete many: completed per claim (false = stale; a claim completes once)');
    if (before) await r.expectUnchanged(m, before, refs.length, 'an all-stale complete');
  }
}

/** A running job reports progress: fenced like complete, no state change (and no request id). */
export class Progress extends Step {
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

/** short: a line; long: over the event's 1 KiB (cut there); huge: over the row's 4 KiB (cut there too). */
export type ErrorSize = 'short' | 'long' | 'huge';

function errorText(size: ErrorSize, step: number): string {
  const head = `boom at step ${step}`;
  if (size === 'short') return head;
  return `${head} ${'e'.repeat(size === 'long' ? 1_500 : 5_000)}`;
}

/**
 * The stack a fail sends (row 'es'): none (a thrown string has none), a real Error's, one over
 * ERROR_STACK_MAX sent as is (the script cuts it), or a non-ASCII one over it that failRequest
 * cuts on a character boundary (the script then keeps it whole).
 */
export type StackKind = 'none' | 'error' | 'huge' | 'wide';

function stackOf(kind: StackKind, claimed: ClaimedJobRecord, step: number): string {
  switch (kind) {
    case 'none':
      return '';
    case 'error':
      return failRequest(SERVING_BACKOFF, claimed, new Error(`boom at step ${step}`)).stack!;
    case 'huge':
      return `Error: boom at step ${step}\n${'    at frame (x.ts:1:1)\n'.repeat(400)}`;
    case 'wide': {
      const error = new Error(`échec à l'étape ${step}`);
      error.stack = `Error: ${error.message}\n${'    at étape (fichier-é.ts:1:1)\n'.repeat(300)}`;
      return failRequest(SERVING_BACKOFF, claimed, error).stack!;
    }
  }
}

export class Fail extends Step {
  constructor(
    readonly pick: ClaimPick,
    readonly mode: FailMode,
    readonly errorSize: ErrorSize,
    readonly lost: boolean,
    readonly dead: DeadKeep = null,
    readonly stack: StackKind = 'none',
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    const size = this.errorSize === 'short' ? '' : ` error=${this.errorSize}`;
    const stack = this.stack === 'none' ? '' : ` stack=${this.stack}`;
    return `fail ${JSON.stringify(this.pick)} ${this.mode}${size}${stack}${showDeadKeep(this.dead)}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const ref = resolveClaim(m, this.pick);
    r.note(`   claim ${showClaim(m, ref, this.pick)}`);
    const job = m.jobs.get(ref.id)!;
    // The wait as the worker works it out: the job's own backoff (from its claim), else the serving one.
    const claimed: ClaimedJobRecord = {
      ...ref,
      data: job.data,
      name: job.name,
      maxAttempts: 0,
      budgetBase: job.base,
      backoff: job.backoff,
      lane: 'default',
      priority: 0,
      timeoutMs: null,
      suspect: job.suspect,
    };
    const wait = failRequest(SERVING_BACKOFF, claimed, null).backoffMs;
    r.eq(
      m,
      wait,
      expectedWait(job, ref.attempt),
      "fail: the wait is the job's own backoff, else the serving one",
    );
    const target = m.failTarget(ref, this.mode);
    const { retention, rule } = resolveDeadKeep(m, r, this.dead, target === 'dead' ? [ref.id] : []);
    const stack = stackOf(this.stack, claimed, m.steps);
    if (this.stack === 'wide' && Buffer.byteLength(stack) > ERROR_STACK_MAX) {
      r.fail(
        m,
        `failRequest left a stack of ${Buffer.byteLength(stack)} bytes: the script would split a character`,
      );
    }
    const request = {
      error: errorText(this.errorSize, m.steps),
      ...(stack === '' ? {} : { stack }),
      backoffMs: this.mode === 'now' ? 0 : wait,
      unrecoverable: this.mode === 'unrecoverable',
      ...(retention === undefined ? {} : { dead: retention }),
    };
    const before = target === 'stale' ? await r.snapshot(m) : null;
    const requestId = r.requestId('fail');
    const outcome = await r.send(m, {
      kind: 'fail',
      requestId,
      lost: this.lost,
      run: () => failJob(r.ctx, ref, request, requestId),
    });
    if (before) {
      const error = r.refused(m, outcome, StaleJobError, 'stale fail');
      r.eq(m, [error.id, error.attempt], [ref.id, ref.attempt], 'StaleJobError names the claim');
      m.fail(ref, this.mode, request.error, 0);
      await r.expectUnchanged(m, before, 1, 'a stale fail');
      return;
    }
    count(`fail: -> ${target}`);
    if (job.base > 0) count('fail: with a moved budget base');
    if (job.suspect) count('fail: clears a crash suspect');
    count(`fail: budget ${job.max !== null ? 'its own' : "the claiming worker's"}, -> ${target}`);
    if (target === 'schedule')
      count(`fail: waits ${job.backoff === null ? 'the serving backoff' : 'its own backoff'}`);
    const result = r.value(m, outcome, 'fail');
    r.eq(m, result.state, target, 'fail outcome');
    const runAt = result.state === 'schedule' ? result.runAt : 0;
    if (result.state === 'schedule') r.isServerTime(m, runAt - wait, 'fail: run-at - backoff');
    if (job.stack !== null) count(`fail: ${stack === '' ? 'drops' : 'replaces'} an earlier stack`);
    if (Buffer.byteLength(stack) > ERROR_STACK_MAX) count('fail: a stack over the row cap, cut');
    m.fail(ref, this.mode, request.error, runAt, rule, stack);
    if (target === 'dead') countTrimmed(m);
  }
}

/** The heartbeat; with the half lease, a held deadline later than now + lease must stay (never shortened). */
export class Extend extends Step {
  constructor(
    readonly picks: Picks,
    readonly half: boolean,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `extend ${showPicks(this.picks)}${this.half ? ' lease/2' : ''}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const refs = resolvePicks(m, this.picks);
    r.note(`   claims ${showClaims(m, refs, this.picks)}`);
    const leaseMs = this.half ? LEASE_MS / 2 : LEASE_MS;
    const before = refs.some((ref) => m.holds(ref)) ? null : await r.snapshot(m);
    const requestId = r.requestId('extend');
    const outcome = await r.send(m, {
      kind: 'extend',
      requestId,
      lost: this.lost,
      run: () => extendLeases(r.ctx, refs, leaseMs, requestId),
    });
    const out = r.value(m, outcome, 'extend');
    r.isServerTime(m, out.leaseDeadline - leaseMs, 'extend: lease deadline - lease');
    const heldRefs = refs.filter((ref) => m.holds(ref));
    if (heldRefs.some((ref) => m.jobs.get(ref.id)!.due)) count('extend: lease expired, not yet reaped');
    if (heldRefs.some((ref) => exactScore(m.jobs.get(ref.id)!) > out.leaseDeadline)) {
      count('extend: a later deadline kept (never shortened)');
    }
    const held = m.extend(refs, out.leaseDeadline);
    r.eq(m, out.held, held, 'extend: held per claim (false = stale)');
    if (before) await r.expectUnchanged(m, before, refs.length, 'an all-stale extend');
  }
}

export class Release extends Step {
  constructor(
    readonly picks: Picks,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `release ${showPicks(this.picks)}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const refs: ClaimRef[] = resolvePicks(m, this.picks);
    r.note(`   claims ${showClaims(m, refs, this.picks)}`);
    const before = refs.some((ref) => m.holds(ref)) ? null : await r.snapshot(m);
    const requestId = r.requestId('release');
    const outcome = await r.send(m, {
      kind: 'release',
      requestId,
      lost: this.lost,
      run: () => releaseJobs(r.ctx, refs, requestId),
    });
    const out = r.value(m, outcome, 'release');
    if (refs.some((ref) => m.holds(ref) && m.jobs.get(ref.id)!.suspect))
      count('release: a crash suspect stays one');
    const released = m.release(refs);
    r.eq(m, out, released, 'release: released per claim (false = stale)');
    if (before) await r.expectUnchanged(m, before, refs.length, 'an all-stale release');
  }
}
