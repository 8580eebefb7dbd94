/**
 * The commands of the model-based test and how they are generated. Two mixes:
 * - everyday: small batches, every transition, stale claims, lost replies, repeats, refusals;
 * - bulk (a few runs): batches at each documented maximum: enqueue of ENQUEUE_MANY_MAX
 *   jobs in one group or across groups, claims of 1,000, complete / release / extend of 1,000
 *   claims, and more than 1,000 leases or run-ats due at once for reap / promote.
 */
import type { CleanState, SuspectRule } from '@app/echomq/internal';
import { CONTROL_CHUNK_MAX } from '@app/echomq/scripts/drain';
import { ENQUEUE_MANY_MAX, SCRIPT_BATCH_MAX } from '@app/echomq/scripts/limits';
import fc from 'fast-check';
import { LANES, RATE_WINDOWS, THROTTLE_HOLD_MS } from '../flow';
import { type FailMode, IDEM_KEYS, JOB_BACKOFFS } from '../reference';
import { Retry, Remove } from './admin';
import { Claim, ClaimTogether } from './claim';
import { type Clockwork, PassTime, PassTimeAll, Pause } from './clock';
import { Enqueue, type GroupSpec, type JobSpec, type PayloadSpec, type TraceSpec } from './enqueue';
import { Refused, REFUSALS, type Refusal } from './refused';
import { Repeat } from './repeat';
import {
  Complete,
  CompleteMany,
  type ErrorSize,
  Extend,
  Fail,
  Progress,
  Release,
  type ResultKind,
  type StackKind,
} from './settle';
import { FlowTime, PauseLane, ResumeLane, SetLane, SetLimits, Throttle } from './flow';
import { Crash, Promote, Reap } from './sweep';
import { deadKeep } from './dead';
import { JobLog, type LogLine } from './log';
import { KeyedEnqueue } from './keyed';
import { AdvanceSchedule, type Expect, RemoveSchedule, type RunAt, UpsertSchedule } from './schedule';
import { type BulkPick, type ClaimPick, type Cmd, type Picks, type Pool } from './step';
import { PromoteJob, RetryAll, UpdateJob, type UpdateSpec } from './control';
import { Clean, type CleanAge, Drain } from './bulk-control';
import { Obliterate } from './obliterate';
import { CONTROL_REFUSALS, ControlRefused } from './control-refused';

export { MAX_BULK_STEPS, MAX_STEPS } from './step';

const MAX = SCRIPT_BATCH_MAX;
/** Enqueues go to their own bound (an enqueue costs Redis about half what a claim does per job). */
const ENQUEUE_MAX = ENQUEUE_MANY_MAX;

/** The value `weight` times in 10, else null. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, weight: number): fc.Arbitrary<T | null> {
  return fc.oneof({ arbitrary: fc.constant(null), weight: 10 - weight }, { arbitrary, weight });
}

/** The first reply of a write call is lost about one time in six (the call then goes twice). */
const lost = fc.oneof(
  { arbitrary: fc.constant(false), weight: 5 },
  { arbitrary: fc.constant(true), weight: 1 },
);

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

const fewPicks: fc.Arbitrary<Picks> = fc
  .array(claimPick, { minLength: 1, maxLength: 3 })
  .map((picks) => ({ kind: 'few' as const, picks }));

const bulkPick: fc.Arbitrary<BulkPick> = fc.record({
  count: fc.constantFrom(MAX, MAX, MAX - 1, Math.floor(MAX / 2)),
  stale: fc.constantFrom(0, 0, 1, 7),
  reverse: fc.boolean(),
});
const bulkPicks: fc.Arbitrary<Picks> = bulkPick.map((bulk) => ({ kind: 'bulk' as const, bulk }));

/** Mostly small payloads; then sizes around the 63-byte chunk edges and the 7000-byte whole-payload edge. */
const payloadSpec: fc.Arbitrary<PayloadSpec> = fc.record({
  bytes: fc.oneof(
    { arbitrary: fc.constant(0), weight: 6 },
    { arbitrary: fc.constantFrom(63, 64, 126, 127, 252, 253, 254, 316, 700), weight: 3 },
    { arbitrary: fc.constantFrom(6999, 7000, 7001, 7100), weight: 1 },
  ),
  filler: fc.constantFrom('x' as const, 'é' as const, '😀' as const),
});

const when = fc.oneof(
  { arbitrary: fc.constant('now' as const), weight: 6 },
  { arbitrary: fc.constant('delay' as const), weight: 3 },
  {
    arbitrary: fc.constantFrom('runAtPast' as const, 'runAtFuture' as const, 'runAtWins' as const),
    weight: 2,
  },
);

const node = fc.nat(1);

/** A job's own budget about half the time; else the claiming worker's applies. */
const ownMax = fc.oneof(
  { arbitrary: fc.integer({ min: 1, max: 3 }), weight: 1 },
  { arbitrary: fc.constant(null), weight: 1 },
);

/**
 * The maxAttempts a claiming worker runs with (undefined: the wrapper's built-in default),
 * so jobs without their own budget are claimed under differing ones over their life.
 */
const workerMax = fc.constantFrom<number | undefined>(undefined, 1, 2, 3, 5);

/**
 * How a claim hands out crash suspects (reaped jobs): the wrapper's default ('any'), or as a
 * worker asks, 'alone' when its process is empty and 'none' when it is not.
 */
const suspectRule = fc.constantFrom<SuspectRule | undefined>(
  undefined,
  'any',
  'alone',
  'alone',
  'none',
  'none',
);

/** Lanes and priorities: none in the everyday mix; in the flow mix, mostly a named lane and a few levels. */
const NO_LANE = { lane: fc.constant(null), priority: fc.constant(0), timeout: fc.constant(false) };
const FLOW_LANE = {
  // mostly lanes 'a' and 'b' (LANES[1], LANES[2]), so that backlogs meet
  lane: sometimes(fc.constantFrom(1, 1, 2, 2, 0, 3), 8),
  priority: fc.oneof(
    { arbitrary: fc.constant(0), weight: 5 },
    { arbitrary: fc.constantFrom(1, 5, 9), weight: 3 },
    { arbitrary: fc.integer({ min: 0, max: 9 }), weight: 1 },
  ),
  timeout: fc.boolean(),
};

/** Most jobs carry no trace context (tracing is off by default); a few carry one at the limit. */
const traceSpec = fc.constantFrom<TraceSpec>('none', 'none', 'none', 'parent', 'parent', 'max');

function jobSpec(reuseWeight: number, flow = false): fc.Arbitrary<JobSpec> {
  return fc.record({
    ...(flow ? FLOW_LANE : NO_LANE),
    payload: payloadSpec,
    when,
    max: ownMax,
    backoff: sometimes(fc.nat(JOB_BACKOFFS.length - 1), 3),
    named: fc.boolean(),
    idem: sometimes(fc.integer({ min: 0, max: IDEM_KEYS.length - 1 }), 3),
    reuse: sometimes(fc.nat(15), reuseWeight),
    node,
    trace: traceSpec,
  });
}

function group(specs: fc.Arbitrary<JobSpec[]>): fc.Arbitrary<GroupSpec> {
  return specs.map((list) => ({ specs: list, size: list.length }));
}

/** A group of `size` plain jobs (no key, no reuse), their ids from both minters in turn. */
const bulkGroup = (size: fc.Arbitrary<number>): fc.Arbitrary<GroupSpec> =>
  fc
    .tuple(
      size,
      fc.constantFrom<JobSpec['when']>('now', 'now', 'delay', 'runAtFuture'),
      fc.constantFrom(1, 2, null),
      fc.constantFrom<TraceSpec>('none', 'parent'),
    )
    .map(([n, w, max, trace]) => ({
      specs: [
        {
          payload: { bytes: 0, filler: 'x' as const },
          when: w,
          max,
          backoff: null,
          named: false,
          idem: null,
          reuse: null,
          node: 0,
          lane: null,
          priority: 0,
          timeout: false,
          trace,
        },
      ],
      size: n,
    }));

/** One job that reuses an id with a row: a group refused alone. */
const clashGroup: fc.Arbitrary<GroupSpec> = fc
  .tuple(jobSpec(0), fc.nat(15))
  .map(([spec, reuse]) => ({ specs: [{ ...spec, reuse, idem: null }], size: 1 }));

const resultKind: fc.Arbitrary<ResultKind> = fc.oneof(
  { arbitrary: fc.constant<ResultKind>('small'), weight: 6 },
  { arbitrary: fc.constantFrom<ResultKind>('empty', 'large', 'edge'), weight: 2 },
);
const bulkResult = fc.constantFrom<ResultKind>('small', 'budget', 'mixed', 'large');
const errorSize = fc.oneof(
  { arbitrary: fc.constant<ErrorSize>('short'), weight: 8 },
  { arbitrary: fc.constantFrom<ErrorSize>('long', 'huge'), weight: 1 },
);
const failMode = fc.constantFrom<FailMode>('backoff', 'now', 'unrecoverable');
/**
 * A worker's fail carries its Error's stack, or none (a thrown string), often enough that a job
 * failing twice meets both in turn; now and then one over the row's cap.
 */
const stackKind = fc.oneof(
  { arbitrary: fc.constantFrom<StackKind>('error', 'none'), weight: 3 },
  { arbitrary: fc.constantFrom<StackKind>('huge', 'wide'), weight: 1 },
);

const limit = fc.constantFrom(1, 2, MAX);
const bigLimit = fc.constantFrom(MAX, MAX, MAX - 1);
/** Now and then a claim / reap / promote runs with nothing to do (and must change nothing). */
const idle = fc.oneof(
  { arbitrary: fc.constant(false), weight: 5 },
  { arbitrary: fc.constant(true), weight: 1 },
);
const pool: fc.Arbitrary<Pool> = fc.constantFrom('pending', 'active', 'schedule', 'dead', 'completed', 'any');
const refusal = fc
  .tuple(fc.constantFrom<Refusal>(...REFUSALS), fc.nat(11))
  .map(([k, i]) => new Refused(k, i));
const repeat = fc
  .tuple(
    fc.nat(30),
    fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }),
  )
  .map(([i, latest]) => new Repeat(i, latest));

const admin = [
  {
    arbitrary: fc
      .tuple(fc.oneof({ arbitrary: fc.constant<Pool>('dead'), weight: 3 }, pool), fc.nat(15), lost)
      .map(([p, i, l]) => new Retry(p, i, l)),
    weight: 2,
  },
  { arbitrary: fc.tuple(pool, fc.nat(15), lost).map(([p, i, l]) => new Remove(p, i, l)), weight: 2 },
];

const passTime = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.constant<Clockwork>('lease'), weight: 4 },
      { arbitrary: fc.constant<Clockwork>('runAt'), weight: 2 },
      { arbitrary: fc.constantFrom<Clockwork>('retention', 'idempotency', 'reply', 'dedupe'), weight: 1 },
    ),
    fc.nat(15),
    fc.boolean(),
  )
  .map(([what, i, same]) => new PassTime(what, i, same));

const passTimeAll = fc
  .tuple(
    fc.constantFrom('lease' as const, 'runAt' as const),
    fc.constantFrom('same' as const, 'forward' as const, 'reverse' as const),
  )
  .map(([what, order]) => new PassTimeAll(what, order));

// ------------------------------------------------------------------ issue 11's transitions

const logLine = fc.oneof(
  { arbitrary: fc.constant<LogLine>('short'), weight: 8 },
  { arbitrary: fc.constantFrom<LogLine>('edge', 'over'), weight: 2 },
);
const jobLog = fc
  .tuple(claimPick, logLine, fc.constantFrom(1, 1, 1, 1, 2, 2, 3, 3, 5, 101), lost)
  .map(([p, line, n, l]) => new JobLog(p, line, n, l));

const runAt = fc.constantFrom<RunAt>('future', 'future', 'past');
const scheduleKey = fc.nat(1);
const schedules = [
  {
    arbitrary: fc
      .tuple(scheduleKey, fc.nat(2), runAt, node, lost, traceSpec)
      .map(([k, d, w, n, l, trace]) => new UpsertSchedule(k, d, w, n, l, trace)),
    weight: 2,
  },
  {
    arbitrary: fc
      .tuple(
        scheduleKey,
        fc.constantFrom<Expect>('current', 'current', 'current', 'current', 'none', 'other'),
        fc.oneof({ arbitrary: fc.constant(true), weight: 5 }, { arbitrary: fc.constant(false), weight: 1 }),
        fc.boolean(),
        runAt,
        node,
        lost,
        traceSpec,
      )
      .map(([k, e, d, rep, w, n, l, trace]) => new AdvanceSchedule(k, e, d, rep, w, n, l, trace)),
    weight: 2,
  },
  { arbitrary: fc.tuple(scheduleKey, lost).map(([k, l]) => new RemoveSchedule(k, l)), weight: 1 },
];

/** Issue 11's steps, weighted against lifecycle steps weighted SCALE times their old weight. */
const SCALE = 3;
function scaled<T>(list: readonly { arbitrary: fc.Arbitrary<T>; weight: number }[]) {
  return list.map((entry) => ({ ...entry, weight: entry.weight * SCALE }));
}
const keyed = (mode: 'debounce' | 'throttle') =>
  fc
    .tuple(fc.nat(1), fc.boolean(), fc.boolean(), node, lost, traceSpec)
    .map(([k, option, named, n, l, trace]) => new KeyedEnqueue(mode, k, option, named, n, l, trace));
const issue11 = [
  { arbitrary: jobLog, weight: 2 },
  ...schedules,
  { arbitrary: keyed('debounce'), weight: 2 },
  { arbitrary: keyed('throttle'), weight: 1 },
];

// ------------------------------------------------------------------ job control

const CHUNK = CONTROL_CHUNK_MAX;
const updatePool = fc.oneof(
  { arbitrary: fc.constantFrom<Pool>('pending', 'schedule'), weight: 6 },
  { arbitrary: fc.constant<Pool>('dead'), weight: 3 },
  { arbitrary: fc.constantFrom<Pool>('active', 'completed', 'any'), weight: 2 },
);
/** Lanes and levels change more often in the flow mix (the everyday mix has none of its own). */
const updateSpec = (flow: boolean): fc.Arbitrary<UpdateSpec> =>
  fc.record({
    data: sometimes(fc.constantFrom<UpdateSpec['data']>('small', 'small', 'few', 'chunked', 'large'), 6),
    when: sometimes(fc.constantFrom<UpdateSpec['when']>('future', 'past', 'delay', 'now'), 5),
    lane: sometimes(fc.nat(LANES.length - 1), flow ? 5 : 2),
    level: sometimes(fc.constantFrom(0, 0, 1, 5, 9), flow ? 5 : 2),
  });
const cleanAge: fc.Arbitrary<CleanAge> = fc.oneof(
  { arbitrary: fc.constantFrom<CleanAge>('all', 'none'), weight: 2 },
  { arbitrary: fc.nat(15), weight: 3 },
);
/**
 * Promote job, update, retry all, drain, clean and (late in a run) obliterate: whole chunks of
 * CONTROL_CHUNK_MAX mostly, now and then small ones so the walk over the lanes resumes.
 */
const controls = (flow: boolean) => [
  {
    arbitrary: fc
      .tuple(fc.oneof({ arbitrary: fc.constant<Pool>('schedule'), weight: 4 }, pool), fc.nat(15), lost)
      .map(([p, i, l]) => new PromoteJob(p, i, l)),
    weight: 2,
  },
  {
    arbitrary: fc
      .tuple(updatePool, fc.nat(15), updateSpec(flow), lost)
      .map(([p, i, u, l]) => new UpdateJob(p, i, u, l)),
    weight: 3,
  },
  {
    arbitrary: fc.tuple(fc.constantFrom(1, 2, CHUNK), idle, lost).map(([n, i, l]) => new RetryAll(n, i, l)),
    weight: 2,
  },
  {
    arbitrary: fc
      .tuple(fc.boolean(), fc.constantFrom(CHUNK, CHUNK, 3, 16), lost)
      .map(([keep, n, l]) => new Drain(keep, n, l)),
    weight: 1,
  },
  {
    arbitrary: fc
      .tuple(
        fc.constantFrom<CleanState>('pending', 'schedule'),
        cleanAge,
        fc.constantFrom(CHUNK, 1, 2, 16),
        lost,
      )
      .map(([state, age, n, l]) => new Clean(state, age, n, l)),
    weight: 2,
  },
  {
    // (dead is empty in most steps, when this is skipped: a larger weight for when it is not)
    arbitrary: fc
      .tuple(cleanAge, fc.constantFrom(CHUNK, 1, 2), lost)
      .map(([age, n, l]) => new Clean('dead', age, n, l)),
    weight: 3,
  },
  {
    arbitrary: fc
      .tuple(fc.boolean(), fc.constantFrom(CHUNK, 5), lost)
      .map(([f, n, l]) => new Obliterate(f, n, l)),
    weight: 1,
  },
  {
    arbitrary: fc
      .tuple(fc.constantFrom(...CONTROL_REFUSALS), fc.nat(15))
      .map(([kind, i]) => new ControlRefused(kind, i)),
    weight: 1,
  },
];

/** The everyday mix: small batches of every kind. */
export const commandArbitrary: fc.Arbitrary<Cmd> = fc.oneof(
  ...issue11,
  ...controls(false),
  ...scaled<Cmd>([
    {
      arbitrary: fc
        .tuple(group(fc.array(jobSpec(1), { minLength: 1, maxLength: 3 })), fc.boolean(), lost)
        .map(([g, single, l]) => new Enqueue([g], single, l)),
      weight: 4,
    },
    {
      arbitrary: fc
        .tuple(
          fc.array(group(fc.array(jobSpec(3), { minLength: 1, maxLength: 3 })), {
            minLength: 2,
            maxLength: 3,
          }),
          lost,
        )
        .map(([groups, l]) => new Enqueue(groups, false, l)),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(
          fc.integer({ min: 1, max: 3 }),
          fc.nat(2),
          fc.constantFrom(0, 1, MAX),
          idle,
          lost,
          workerMax,
          suspectRule,
        )
        .map(([n, w, p, i, l, max, rule]) => new Claim(n, w, p, i, l, max, rule)),
      weight: 7,
    },
    {
      arbitrary: fc
        .tuple(
          fc.integer({ min: 1, max: 2 }),
          fc.integer({ min: 1, max: 2 }),
          fc.constantFrom(1, MAX),
          fc.tuple(workerMax, workerMax),
          fc.tuple(suspectRule, suspectRule),
        )
        .map(([a, b, p, maxes, rules]) => new ClaimTogether([a, b], p, maxes, rules)),
      weight: 1,
    },
    {
      arbitrary: fc
        .tuple(claimPick, fc.boolean(), resultKind, lost)
        .map(([p, keep, res, l]) => new Complete(p, keep, res, l)),
      weight: 3,
    },
    {
      arbitrary: fc
        .tuple(fewPicks, fc.boolean(), resultKind, lost)
        .map(([p, keep, res, l]) => new CompleteMany(p, keep, res, l)),
      weight: 2,
    },
    { arbitrary: claimPick.map((p) => new Progress(p)), weight: 1 },
    {
      arbitrary: fc
        .tuple(claimPick, failMode, errorSize, lost, deadKeep, stackKind)
        .map(([p, mode, size, l, keep, stack]) => new Fail(p, mode, size, l, keep, stack)),
      weight: 4,
    },
    {
      arbitrary: fc.tuple(fewPicks, fc.boolean(), lost).map(([p, half, l]) => new Extend(p, half, l)),
      weight: 2,
    },
    { arbitrary: fc.tuple(fewPicks, lost).map(([p, l]) => new Release(p, l)), weight: 3 },
    { arbitrary: fc.tuple(limit, idle, deadKeep).map(([n, i, keep]) => new Reap(n, i, keep)), weight: 4 },
    { arbitrary: fc.nat(7).map((i) => new Crash(i)), weight: 2 },
    { arbitrary: fc.tuple(limit, idle).map(([n, i]) => new Promote(n, i)), weight: 3 },
    ...admin,
    { arbitrary: passTime, weight: 7 },
    { arbitrary: passTimeAll, weight: 1 },
    { arbitrary: fc.constant(new Pause(true)), weight: 1 },
    { arbitrary: fc.constant(new Pause(false)), weight: 2 },
    { arbitrary: repeat, weight: 4 },
    { arbitrary: refusal, weight: 2 },
  ]),
);

/** The bulk mix: batches at the documented maxima, and more than a batch due at once. */
export const bulkCommandArbitrary: fc.Arbitrary<Cmd> = fc.oneof(
  {
    arbitrary: fc
      .tuple(bulkGroup(fc.constantFrom(ENQUEUE_MAX, ENQUEUE_MAX, ENQUEUE_MAX - 1)), fc.boolean(), lost)
      .map(([g, single, l]) => new Enqueue([g], single, l)),
    weight: 5,
  },
  {
    // Several callers merged into one call of the maximum size, one of them clashing.
    arbitrary: fc
      .tuple(
        bulkGroup(fc.constantFrom(Math.floor((ENQUEUE_MAX * 2) / 5), Math.floor((ENQUEUE_MAX * 3) / 5))),
        clashGroup,
        fc.boolean(),
        lost,
      )
      .map(([g, clash, clashFirst, l]) => {
        const rest = { ...g, size: ENQUEUE_MAX - 1 - g.size };
        return new Enqueue(clashFirst ? [clash, g, rest] : [g, clash, rest], false, l);
      }),
    weight: 2,
  },
  {
    arbitrary: fc
      .tuple(bigLimit, fc.nat(2), fc.constantFrom(0, MAX), lost, workerMax, suspectRule)
      .map(([n, w, p, l, max, rule]) => new Claim(n, w, p, false, l, max, rule)),
    weight: 5,
  },
  { arbitrary: fc.constant(new ClaimTogether([MAX / 2, MAX / 2], MAX)), weight: 1 },
  {
    arbitrary: fc
      .tuple(bulkPicks, fc.boolean(), bulkResult, lost)
      .map(([p, keep, res, l]) => new CompleteMany(p, keep, res, l)),
    weight: 2,
  },
  {
    arbitrary: fc.tuple(bulkPicks, fc.boolean(), lost).map(([p, half, l]) => new Extend(p, half, l)),
    weight: 2,
  },
  { arbitrary: fc.tuple(bulkPicks, lost).map(([p, l]) => new Release(p, l)), weight: 2 },
  {
    arbitrary: fc
      .tuple(claimPick, failMode, errorSize, lost, stackKind)
      .map(([p, mode, size, l, stack]) => new Fail(p, mode, size, l, null, stack)),
    weight: 1,
  },
  { arbitrary: passTimeAll, weight: 4 },
  {
    arbitrary: fc.tuple(bigLimit, fc.constant(false), deadKeep).map(([n, i, keep]) => new Reap(n, i, keep)),
    weight: 3,
  },
  // A worker dies holding a claim of up to the maximum: more suspects than one claim skips.
  { arbitrary: fc.nat(7).map((i) => new Crash(i)), weight: 1 },
  { arbitrary: fc.tuple(bigLimit, fc.constant(false)).map(([n, i]) => new Promote(n, i)), weight: 3 },
  { arbitrary: repeat, weight: 3 },
  { arbitrary: refusal, weight: 1 },
  ...admin.map((a) => ({ ...a, weight: 1 })),
);

/**
 * How a bulk run starts: a call of the maximum size, a call of several callers (one clashing,
 * refused alone), then two claims of the maximum, so more than a batch is pending, active or
 * scheduled and a reap or promote after "every lease / run-at runs out" finds more due than it
 * may move.
 */
export const bulkSetup: fc.Arbitrary<Cmd[]> = fc
  .tuple(
    bulkGroup(fc.constantFrom(ENQUEUE_MAX, ENQUEUE_MAX, ENQUEUE_MAX - 1)).map((g) => ({
      ...g,
      specs: g.specs.map((s) => ({ ...s, when: 'now' as const })),
    })),
    fc.boolean(),
    fc.tuple(bulkGroup(fc.integer({ min: 20, max: 60 })), clashGroup, fc.boolean()),
    fc.constantFrom(0, MAX),
    lost,
  )
  .map(([first, single, [g, clash, clashFirst], promote, l]) => [
    new Enqueue([first], single, false),
    new Enqueue(clashFirst ? [clash, g, { ...g, size: 30 }] : [g, clash, { ...g, size: 30 }], false, l),
    new Claim(MAX, 0, promote, false, false),
    new Claim(MAX, 1, promote, false, l),
  ]);

// ------------------------------------------------------------------ the flow mix

const lane = fc.nat(LANES.length - 1).map((i) => LANES[i]);
/** A limit: set to a small value (so it binds), cleared, or left as it is. */
function limitOf<T>(value: fc.Arbitrary<T>): fc.Arbitrary<T | null | undefined> {
  return fc.oneof(
    { arbitrary: fc.constant(undefined), weight: 4 },
    { arbitrary: value, weight: 3 },
    { arbitrary: fc.constant(null), weight: 2 },
  );
}
const rate = fc.record({ max: fc.integer({ min: 1, max: 4 }), windowMs: fc.constantFrom(...RATE_WINDOWS) });
const setLimits = fc
  .record({
    rateLimit: limitOf(rate),
    globalConcurrency: limitOf(fc.integer({ min: 1, max: 4 })),
    laneConcurrency: limitOf(fc.integer({ min: 1, max: 2 })),
    laneRateLimit: limitOf(rate),
  })
  .filter((limits) => Object.values(limits).some((v) => v !== undefined));
const setLane = fc
  .tuple(
    lane,
    fc.record({
      weight: limitOf(fc.constantFrom(1, 2, 3, 1000)),
      concurrency: limitOf(fc.integer({ min: 1, max: 2 })),
    }),
    lost,
  )
  .filter(([, settings]) => settings.weight !== undefined || settings.concurrency !== undefined);

/**
 * The flow mix: jobs in lanes and at levels, claims under limits (rate windows of an hour or
 * two, so an outcome is a count of claims), lane settings, lane pause / resume, throttles of
 * both scopes, and time passing for a lane timer or the queue's hold; and every lifecycle
 * step of the everyday mix, so leaving active (complete, fail, release, reap, remove)
 * gives slots back.
 */
export const flowCommandArbitrary: fc.Arbitrary<Cmd> = fc.oneof(
  ...issue11,
  ...controls(true),
  ...scaled<Cmd>([
    {
      arbitrary: fc
        .tuple(group(fc.array(jobSpec(1, true), { minLength: 1, maxLength: 4 })), fc.boolean(), lost)
        .map(([g, single, l]) => new Enqueue([g], single, l)),
      weight: 6,
    },
    {
      arbitrary: fc
        .tuple(
          fc.integer({ min: 1, max: 6 }),
          fc.nat(2),
          fc.constantFrom(0, 1, MAX),
          idle,
          lost,
          workerMax,
          suspectRule,
        )
        .map(([n, w, p, i, l, max, rule]) => new Claim(n, w, p, i, l, max, rule)),
      weight: 8,
    },
    {
      arbitrary: fc
        .tuple(
          fc.integer({ min: 1, max: 3 }),
          fc.integer({ min: 1, max: 3 }),
          fc.constantFrom(1, MAX),
          fc.tuple(suspectRule, suspectRule),
        )
        .map(([a, b, p, rules]) => new ClaimTogether([a, b], p, [undefined, undefined], rules)),
      weight: 1,
    },
    {
      arbitrary: fc
        .tuple(claimPick, fc.boolean(), resultKind, lost)
        .map(([p, keep, res, l]) => new Complete(p, keep, res, l)),
      weight: 4,
    },
    {
      arbitrary: fc
        .tuple(fewPicks, fc.boolean(), fc.constant<ResultKind>('small'), lost)
        .map(([p, keep, res, l]) => new CompleteMany(p, keep, res, l)),
      weight: 1,
    },
    {
      arbitrary: fc
        .tuple(claimPick, failMode, fc.constant<ErrorSize>('short'), lost, stackKind)
        .map(([p, mode, size, l, stack]) => new Fail(p, mode, size, l, null, stack)),
      weight: 3,
    },
    { arbitrary: fc.tuple(fewPicks, lost).map(([p, l]) => new Release(p, l)), weight: 2 },
    { arbitrary: fc.tuple(limit, idle).map(([n, i]) => new Reap(n, i)), weight: 3 },
    { arbitrary: fc.nat(7).map((i) => new Crash(i)), weight: 2 },
    { arbitrary: fc.tuple(limit, idle).map(([n, i]) => new Promote(n, i)), weight: 1 },
    ...admin.map((a) => ({ ...a, weight: 1 })),
    { arbitrary: passTime, weight: 5 },
    { arbitrary: fc.tuple(setLimits, lost).map(([limits, l]) => new SetLimits(limits, l)), weight: 3 },
    { arbitrary: setLane.map(([name, settings, l]) => new SetLane(name, settings, l)), weight: 3 },
    { arbitrary: fc.tuple(lane, lost).map(([name, l]) => new PauseLane(name, l)), weight: 1 },
    { arbitrary: fc.tuple(lane, lost).map(([name, l]) => new ResumeLane(name, l)), weight: 2 },
    {
      arbitrary: fc
        .tuple(
          claimPick,
          fc.constantFrom<'queue' | 'lane'>('queue', 'lane', 'lane'),
          fc.constantFrom(THROTTLE_HOLD_MS, THROTTLE_HOLD_MS / 2),
          lost,
        )
        .map(([p, scope, ms, l]) => new Throttle(p, scope, ms, l)),
      weight: 3,
    },
    {
      arbitrary: fc
        .tuple(fc.constantFrom<'laneTimer' | 'hold'>('laneTimer', 'laneTimer', 'hold'), fc.nat(3))
        .map(([what, i]) => new FlowTime(what, i)),
      weight: 3,
    },
    { arbitrary: fc.constant(new Pause(true)), weight: 1 },
    { arbitrary: fc.constant(new Pause(false)), weight: 2 },
    { arbitrary: repeat, weight: 3 },
  ]),
);

/**
 * How a flow run starts, so that weights, caps and backlogs meet often: lane 'a' weighted
 * (or not), a lane cap (or none), then work in lanes 'a' and 'b' (and the default lane).
 */
export const flowSetup: fc.Arbitrary<Cmd[]> = fc
  .tuple(
    fc.constantFrom(1, 2, 3, 3),
    fc.constantFrom<number | undefined>(undefined, undefined, 1, 2),
    fc.array(jobSpec(0, true), { minLength: 5, maxLength: 9 }),
    // One run in four starts as a plain queue (no flow mark): the first limit, lane setting,
    // pause, throttle or priority then marks it while jobs are active.
    fc.constantFrom(false, false, false, true),
  )
  .map(([weight, cap, specs, plain]) => [
    ...(plain ? [] : [new SetLane('a', { weight }, false)]),
    ...(cap === undefined || plain ? [] : [new SetLimits({ laneConcurrency: cap }, false)]),
    new Enqueue(
      [
        {
          // lanes a and b in turn (and now and then the default lane), at level 0 but for a few
          specs: specs.map((s, i) => ({
            ...s,
            when: 'now' as const,
            reuse: null,
            lane: i % 5 === 4 ? 0 : 1 + (i % 2),
            priority: i % 4 === 3 && !plain ? s.priority : 0,
          })),
          size: specs.length,
        },
      ],
      false,
      false,
    ),
  ]);
