/**
 * Refused calls (invariant 8): arguments out of their documented range are refused before the
 * first write, so the call changes nothing at all (every key, metrics included) and records no
 * reply. Each refusal is aimed at a call that would otherwise act (a current claim, a dead
 * job, pending work), so a check that came after a write would show.
 */
import {
  advanceScheduleScript,
  claimJobs,
  completeJobs,
  EchoMqError,
  enqueueGroups,
  enqueueJobs,
  extendLeases,
  failJob,
  promoteDue,
  reapExpired,
  releaseJobs,
  removeJob,
  retryDead,
  type ClaimRef,
  type NewJobRecord,
  type ScriptContext,
} from '@app/echomq/internal';
import { replayWindow } from '@app/echomq/scripts/context';
import { ENQUEUE_MANY_MAX, SCRIPT_BATCH_MAX, TRACE_CONTEXT_MAX_BYTES } from '@app/echomq/scripts/limits';
import { runScript } from '@app/echomq/scripts/run-script';
import { IDEMPOTENCY_TTL_MS, LATER_MS, LEASE_MS, type Model, type WriteKind } from '../reference';
import { definitionSha1 } from '../schedules';
import { count, type Outcome, settle, type System } from '../system';
import { DEFINITIONS, SCHEDULE_KEYS } from './schedule';
import { Step } from './step';

export const REFUSALS = [
  'claimCount0',
  'claimCountOver',
  'claimPromoteOver',
  'claimLease0',
  'claimBadMax',
  'claimBadSuspects',
  'reapLimit0',
  'reapLimitOver',
  'promoteLimit0',
  'promoteLimitOver',
  'eventsMaxLen',
  'replayWindow',
  'requestId',
  'enqueueOver',
  'enqueueBadMax',
  'enqueueBadBackoff',
  'enqueueBadTrace',
  'advanceBadTrace',
  'completeKeepNegative',
  'completeOver',
  'extendOver',
  'releaseOver',
] as const;
export type Refusal = (typeof REFUSALS)[number];

/** The lifecycle's write calls (the flow admin calls and throttle are refused by their own specs). */
type Victim =
  | Extract<WriteKind, 'enqueue' | 'claim' | 'complete' | 'fail' | 'extend' | 'release' | 'retry' | 'remove'>
  | 'reap'
  | 'promote';

const BAD_EVENTS_MAX_LEN = [1.5, 0, 2_000_000_000] as const;
const BAD_REPLAY_WINDOW = [0, 1.5, -5] as const;
const BAD_REQUEST_IDS = ['with space', '', 'x'.repeat(65), 'semi;colon'] as const;
const BAD_MAX_ATTEMPTS = [0, 1.5, 1_000_001] as const;
/** Texts a row's backoff may not hold: not JSON, not an object, a policy that cannot be stored, too long. */
const BAD_BACKOFFS = [
  'fixed',
  '[1]',
  '{"type":"custom"}',
  '{"delayMs":5}',
  `{"type":"fixed","delayMs":1,"pad":"${'x'.repeat(256)}"}`,
] as const;

/** The calls a context- or request-id refusal can be aimed at, given what the run has. */
function victims(m: Readonly<Model>, takesRequestId: boolean): Victim[] {
  const out: Victim[] = ['enqueue', 'claim'];
  // (extend writes no event, so it takes no eventsMaxLen: only a request-id refusal aims at it)
  if (m.claims.length > 0)
    out.push('complete', 'fail', ...(takesRequestId ? (['extend'] as const) : []), 'release');
  if (m.seqOf.size > 0) out.push('retry', 'remove');
  if (!takesRequestId) out.push('reap', 'promote');
  return out;
}

/** A claim the model holds, else any claim ever handed out. */
function someClaim(m: Model, index: number): ClaimRef {
  const active = m.inPlace('active');
  if (active.length > 0) {
    const job = active[index % active.length];
    return { id: job.id, attempt: job.attempts, claimant: job.claimant! };
  }
  return m.claims[index % m.claims.length];
}

/** `n` claims, the current ones first, cycling when there are fewer. */
function manyClaims(m: Model, n: number): ClaimRef[] {
  const current = m
    .inPlace('active')
    .map((job) => ({ id: job.id, attempt: job.attempts, claimant: job.claimant! }));
  const pool = current.length > 0 ? current : m.claims;
  return Array.from({ length: n }, (_, i) => pool[i % pool.length]);
}

function record(id: string, maxAttempts = 1, backoff?: string): NewJobRecord {
  return {
    id,
    data: '{}',
    name: '',
    maxAttempts,
    ...(backoff === undefined ? {} : { backoff }),
    delayMs: 0,
    runAtMs: 0,
    idempotencyKey: '',
  };
}

export class Refused extends Step {
  constructor(
    readonly refusal: Refusal,
    /** Which call a context or request-id refusal is aimed at; which bad value. */
    readonly index: number,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    switch (this.refusal) {
      case 'completeKeepNegative':
      case 'completeOver':
      case 'extendOver':
      case 'releaseOver':
        return m.claims.length > 0;
      default:
        return true;
    }
  }
  toString(): string {
    return `refused: ${this.refusal} #${this.index}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const fresh: string[] = [];
    const mint = (): string => {
      const id = r.mint(this.index);
      fresh.push(id);
      return id;
    };
    const { what, requestId, call } = this.build(m, r, mint);
    r.note(`   ${what}`);
    const before = await r.snapshot(m, { ids: fresh, replies: requestId === null ? [] : [requestId] });
    for (const id of fresh) m.mint(id);
    checkRefused(m, r, await settle(call()), what, this.refusal);
    await r.expectUnchanged(m, before, 0, `a refused call (${what})`);
  }

  private build(
    m: Model,
    r: System,
    mint: () => string,
  ): { what: string; requestId: string | null; call: () => Promise<unknown> } {
    const i = this.index;
    const claim = (
      count: number,
      extra: { leaseMs?: number; promoteLimit?: number; maxAttempts?: number } = {},
    ) => {
      const prefix = r.claimantPrefix(0);
      return {
        requestId: prefix,
        call: () => claimJobs(r.ctx, { count, leaseMs: LEASE_MS, claimantPrefix: prefix, ...extra }),
      };
    };
    switch (this.refusal) {
      case 'claimCount0':
        return { what: 'claim count 0', ...claim(0) };
      case 'claimCountOver':
        return { what: `claim count ${SCRIPT_BATCH_MAX + 1}`, ...claim(SCRIPT_BATCH_MAX + 1) };
      case 'claimPromoteOver':
        return {
          what: `claim promote limit ${SCRIPT_BATCH_MAX + 1}`,
          ...claim(1, { promoteLimit: SCRIPT_BATCH_MAX + 1 }),
        };
      case 'claimLease0':
        return { what: 'claim lease 0 ms', ...claim(1, { leaseMs: 0 }) };
      case 'claimBadMax': {
        const bad = BAD_MAX_ATTEMPTS[i % BAD_MAX_ATTEMPTS.length];
        return { what: `claim by a worker with maxAttempts ${bad}`, ...claim(3, { maxAttempts: bad }) };
      }
      case 'claimBadSuspects': {
        // Past the wrapper (which refuses it too): the script's own check of ARGV[9].
        const bad = ['bogus', ''][i % 2];
        const prefix = r.claimantPrefix(0);
        const k = r.ctx.keys;
        const keys = [
          k.fence,
          k.reply(prefix),
          k.pending,
          k.active,
          k.schedule,
          k.metrics,
          k.events,
          k.wake,
          k.paused,
        ];
        const argv = [
          k.jobPrefix,
          3,
          LEASE_MS,
          prefix,
          r.ctx.eventsMaxLen,
          SCRIPT_BATCH_MAX,
          replayWindow(r.ctx),
          3,
          bad,
        ];
        return {
          what: `claim with suspects ${JSON.stringify(bad)}`,
          requestId: prefix,
          call: () => runScript(r.ctx, 'emqClaim', keys, argv),
        };
      }
      case 'reapLimit0':
        return { what: 'reap limit 0', requestId: null, call: () => reapExpired(r.ctx, 0) };
      case 'reapLimitOver':
        return {
          what: `reap limit ${SCRIPT_BATCH_MAX + 1}`,
          requestId: null,
          call: () => reapExpired(r.ctx, SCRIPT_BATCH_MAX + 1),
        };
      case 'promoteLimit0':
        return { what: 'promote limit 0', requestId: null, call: () => promoteDue(r.ctx, 0) };
      case 'promoteLimitOver':
        return {
          what: `promote limit ${SCRIPT_BATCH_MAX + 1}`,
          requestId: null,
          call: () => promoteDue(r.ctx, SCRIPT_BATCH_MAX + 1),
        };
      case 'eventsMaxLen': {
        const value = BAD_EVENTS_MAX_LEN[i % BAD_EVENTS_MAX_LEN.length];
        const options = victims(m, false);
        const victim = options[i % options.length];
        const ctx = { ...r.ctx, eventsMaxLen: value };
        return { what: `${victim} with eventsMaxLen ${value}`, ...this.aim(m, r, ctx, victim, null, mint) };
      }
      case 'replayWindow': {
        const value = BAD_REPLAY_WINDOW[i % BAD_REPLAY_WINDOW.length];
        const options = victims(m, true);
        const victim = options[i % options.length];
        const ctx = { ...r.ctx, replayWindowMs: value };
        return { what: `${victim} with replayWindowMs ${value}`, ...this.aim(m, r, ctx, victim, null, mint) };
      }
      case 'requestId': {
        const bad = BAD_REQUEST_IDS[i % BAD_REQUEST_IDS.length];
        const options = victims(m, true);
        const victim = options[i % options.length];
        const aimed = this.aim(m, r, r.ctx, victim, bad, mint);
        return {
          what: `${victim} with request id ${JSON.stringify(bad)}`,
          requestId: null,
          call: aimed.call,
        };
      }
      case 'enqueueOver': {
        // The size check comes first: one id given ENQUEUE_MANY_MAX + 1 times, across groups or in one.
        const job = record(mint());
        const all = Array.from({ length: ENQUEUE_MANY_MAX + 1 }, () => job);
        const groups = i % 2 === 0 ? [all] : [all.slice(0, 400), all.slice(400)];
        const requestId = r.requestId('enqueue');
        return {
          what: `enqueue of ${all.length} jobs in ${groups.length} group(s)`,
          requestId,
          call: () => enqueueGroups(r.ctx, groups, IDEMPOTENCY_TTL_MS, requestId),
        };
      }
      case 'enqueueBadMax': {
        // A bad job last, in the last group: nothing of the call may be written.
        const bad = BAD_MAX_ATTEMPTS[i % BAD_MAX_ATTEMPTS.length];
        const groups = [
          [record(mint()), record(mint())],
          [record(mint()), record(mint(), bad)],
        ];
        const requestId = r.requestId('enqueue');
        return {
          what: `enqueue groups whose last job has maxAttempts ${bad}`,
          requestId,
          call: () => enqueueGroups(r.ctx, groups, IDEMPOTENCY_TTL_MS, requestId),
        };
      }
      case 'enqueueBadTrace': {
        // One byte past the limit, on the last job: a trace context is never cut by the script.
        const groups = [
          [record(mint())],
          [record(mint()), { ...record(mint()), traceContext: 'x'.repeat(TRACE_CONTEXT_MAX_BYTES + 1) }],
        ];
        const requestId = r.requestId('enqueue');
        return {
          what: `enqueue groups whose last job has a trace context of ${TRACE_CONTEXT_MAX_BYTES + 1} bytes`,
          requestId,
          call: () => enqueueGroups(r.ctx, groups, IDEMPOTENCY_TTL_MS, requestId),
        };
      }
      case 'advanceBadTrace': {
        // Aimed as a worker's advance is (its schedule's next occurrence, the right digest), so a
        // check made after a write would show: one byte past the limit is refused, never cut.
        const key = [...m.schedules.definitions.keys()].sort()[0] ?? SCHEDULE_KEYS[0];
        const call = {
          key,
          expectedId: m.schedules.next.get(key) ?? null,
          digest: definitionSha1(m.schedules.definitions.get(key) ?? DEFINITIONS[0]),
          id: mint(),
          runAtMs: r.serverNow + LATER_MS,
          replace: false,
          traceContext: 'x'.repeat(TRACE_CONTEXT_MAX_BYTES + 1),
        };
        const requestId = r.requestId('advanceSchedule');
        return {
          what: `advance schedule ${key} with a claimed trace context of ${TRACE_CONTEXT_MAX_BYTES + 1} bytes`,
          requestId,
          call: () => advanceScheduleScript(r.ctx, call, requestId),
        };
      }
      case 'enqueueBadBackoff': {
        // As above: the bad backoff is on the last job, so a check after a write would show.
        const bad = BAD_BACKOFFS[i % BAD_BACKOFFS.length];
        const groups = [
          [record(mint())],
          [record(mint(), 2, '{"type":"fixed","delayMs":5}'), record(mint(), 2, bad)],
        ];
        const requestId = r.requestId('enqueue');
        return {
          what: `enqueue groups whose last job has backoff ${bad.slice(0, 40)}`,
          requestId,
          call: () => enqueueGroups(r.ctx, groups, IDEMPOTENCY_TTL_MS, requestId),
        };
      }
      case 'completeKeepNegative': {
        const requestId = r.requestId('complete');
        const ref = someClaim(m, i);
        return {
          what: 'complete with keep -1 ms',
          requestId,
          call: () => completeJobs(r.ctx, [{ claim: ref, result: '' }], -1, requestId),
        };
      }
      case 'completeOver': {
        const requestId = r.requestId('complete');
        const completions = manyClaims(m, SCRIPT_BATCH_MAX + 1).map((claim) => ({ claim, result: '' }));
        return {
          what: `complete of ${completions.length} claims`,
          requestId,
          call: () => completeJobs(r.ctx, completions, 0, requestId),
        };
      }
      case 'extendOver': {
        const requestId = r.requestId('extend');
        const refs = manyClaims(m, SCRIPT_BATCH_MAX + 1);
        return {
          what: `extend of ${refs.length} claims`,
          requestId,
          call: () => extendLeases(r.ctx, refs, LEASE_MS, requestId),
        };
      }
      case 'releaseOver': {
        const requestId = r.requestId('release');
        const refs = manyClaims(m, SCRIPT_BATCH_MAX + 1);
        return {
          what: `release of ${refs.length} claims`,
          requestId,
          call: () => releaseJobs(r.ctx, refs, requestId),
        };
      }
    }
  }

  /** A call that would act (given a good context and request id), with this context and request id. */
  private aim(
    m: Model,
    r: System,
    ctx: ScriptContext,
    victim: Victim,
    badRequestId: string | null,
    mint: () => string,
  ): { requestId: string | null; call: () => Promise<unknown> } {
    const i = this.index;
    const id = (kind: WriteKind): string =>
      badRequestId ?? (kind === 'claim' ? r.claimantPrefix(0) : r.requestId(kind));
    const some = (place: 'dead' | 'any'): string => {
      const jobs = place === 'dead' ? m.inPlace('dead') : m.withRow();
      const ids = jobs.length > 0 ? jobs.map((job) => job.id) : m.allIds();
      return ids[i % ids.length];
    };
    const requestId = victim === 'reap' || victim === 'promote' ? null : id(victim);
    const known = badRequestId === null ? requestId : null;
    const rid = requestId!;
    switch (victim) {
      case 'enqueue': {
        const job = record(mint());
        return { requestId: known, call: () => enqueueJobs(ctx, [job], IDEMPOTENCY_TTL_MS, rid) };
      }
      case 'claim':
        return {
          requestId: known,
          call: () =>
            claimJobs(ctx, {
              count: 3,
              leaseMs: LEASE_MS,
              claimantPrefix: rid,
              promoteLimit: SCRIPT_BATCH_MAX,
            }),
        };
      case 'complete': {
        const ref = someClaim(m, i);
        return { requestId: known, call: () => completeJobs(ctx, [{ claim: ref, result: '' }], 0, rid) };
      }
      case 'fail': {
        const ref = someClaim(m, i);
        const request = { error: 'refused', backoffMs: 0, unrecoverable: false };
        return { requestId: known, call: () => failJob(ctx, ref, request, rid) };
      }
      case 'extend': {
        const ref = someClaim(m, i);
        return { requestId: known, call: () => extendLeases(ctx, [ref], LEASE_MS, rid) };
      }
      case 'release': {
        const ref = someClaim(m, i);
        return { requestId: known, call: () => releaseJobs(ctx, [ref], rid) };
      }
      case 'retry': {
        const target = some('dead');
        return { requestId: known, call: () => retryDead(ctx, target, rid) };
      }
      case 'remove': {
        const target = some('any');
        return { requestId: known, call: () => removeJob(ctx, target, rid) };
      }
      case 'reap':
        return { requestId: null, call: () => reapExpired(ctx, SCRIPT_BATCH_MAX) };
      case 'promote':
        return { requestId: null, call: () => promoteDue(ctx, SCRIPT_BATCH_MAX) };
    }
  }
}

/** A refusal is an EchoMqError (InvalidArgumentError for a bad argument), never a raw reply. */
function checkRefused(m: Model, r: System, outcome: Outcome<unknown>, what: string, refusal: Refusal): void {
  if (outcome.ok)
    r.fail(m, `${what}: must be refused, but the call succeeded with ${JSON.stringify(outcome.value)}`);
  const error = outcome.error;
  if (error instanceof EchoMqError) {
    count(`refused: ${error.constructor.name} (${refusal})`);
    return;
  }
  r.fail(m, `${what}: expected an EchoMqError, got ${String(error)}`);
}
