/**
 * claim: pending -> active, up to the documented maximum per call, after promoting due jobs.
 * The claimant prefix is the call's request id, so a repeat of the call answers with the jobs
 * that claim still holds.
 */
import { claimJobs, type ClaimBatch, type ClaimedJobRecord, type SuspectRule } from '@app/echomq/internal';
import { byId, type ClaimPrediction, LEASE_MS, type Model } from '../reference';
import { count, type Outcome, settle, type System } from '../system';
import { lostTag, Step } from './step';

/** Sends one claim through the system (reply record, repeat check) and checks it against the model. */
async function claimAndCheck(
  m: Model,
  r: System,
  request: {
    count: number;
    worker: number;
    promoteLimit: number;
    lost: boolean;
    /** The claiming worker's maxAttempts; undefined leaves it to the wrapper's built-in default. */
    maxAttempts?: number;
    /** How crash suspects are handed out; undefined leaves it to the wrapper's default ('any'). */
    suspects?: SuspectRule;
  },
): Promise<void> {
  const prefix = r.claimantPrefix(request.worker);
  const before = m.claimIsNoop(request.promoteLimit) ? await r.snapshot(m) : null;
  const outcome = await r.send(m, {
    kind: 'claim',
    requestId: prefix,
    lost: request.lost,
    run: () =>
      claimJobs(r.ctx, {
        count: request.count,
        leaseMs: LEASE_MS,
        claimantPrefix: prefix,
        promoteLimit: request.promoteLimit,
        ...workerBudget(request.maxAttempts),
        ...suspectRule(request.suspects),
      }),
    checkRepeat: checkClaimRepeat(r, prefix),
    comparable: repeatable,
  });
  const batch = r.value(m, outcome, 'claim');
  const due = m.dueIn('schedule').length;
  const paused = m.paused;
  const budgets = workerBudgets(m);
  const pendingLevels = m.inPlace('pending').map((job) => job.level);
  const suspectsPending = m.inPlace('pending').some((job) => job.suspect);
  const predicted = m.claim(
    request.count,
    prefix,
    request.promoteLimit,
    batch.leaseDeadline,
    request.maxAttempts,
    request.suspects,
  );
  countBudgets(m, predicted.jobs, budgets);
  countSuspects(predicted, request.suspects ?? 'any', suspectsPending);
  countFlow(m, predicted, pendingLevels);
  count(
    `claim: ${paused ? 'paused' : predicted.jobs.length > 0 ? 'got jobs' : 'empty'}` +
      `${due > 0 && request.promoteLimit > 0 ? ', promoted' : ''}`,
  );
  if (predicted.jobs.length >= 1000) count('claim: 1000 jobs in one call');
  checkClaimed(m, r, prefix, batch, predicted, 'claimed jobs (pending order, token = attempts + 1)');
  if (before) await r.expectUnchanged(m, before, 0, 'a claim with nothing to claim or promote');
}

/**
 * What a resend of a claim repeats: not the server's now, nor a limit (a repeat claims nothing
 * new); and its jobs in id order: the first answer lists them in the order the walk took them
 * (lane by lane), a repeat finds them by their deadline (by id). See the report of task G.
 */
function repeatable(batch: ClaimBatch): unknown {
  // (nor the next run-at: a repeat reads it as it is now, and the first call may have set a
  // lane timer after reading it)
  // (nor whether it skipped a suspect: a repeat claims nothing, so meets none)
  const {
    serverNow: _now,
    limitedUntil: _limited,
    nextRunAt: _next,
    suspectAhead: _ahead,
    jobs,
    ...rest
  } = batch;
  return { ...rest, jobs: [...jobs].sort(byId) };
}

/** Coverage of flow control in one claim: what held lanes back, weights, priorities, limits. */
function countFlow(m: Model, predicted: ClaimPrediction, pendingLevels: readonly number[]): void {
  if (predicted.stop) count(`flow: claim stopped by ${predicted.stop}`);
  for (const why of m.restored.splice(0)) count(`flow: lane restored (${why.replace(/^\S+ by /, 'by ')})`);
  const walk = predicted.walk;
  if (!walk) return;
  if (walk.heldByCap.length > 0) count('flow: lane held by its cap');
  if (walk.heldByRate.length > 0) count('flow: lane held by its rate limit');
  for (const take of walk.multiTake)
    count(`flow: a lane took ${take.k > 1 && take.weight > 1 ? 'k > 1 by its weight' : 'k > 1'}`);
  const top = Math.max(-1, ...walk.levels);
  if (top > 0 && pendingLevels.some((level) => level < top))
    count('flow: priority jump (a higher level first)');
  if (new Set(predicted.jobs.map((job) => job.lane)).size > 1) count('flow: one claim served several lanes');
}

/** The claim request's suspects field, present only when the step gives one. */
function suspectRule(suspects: SuspectRule | undefined): { suspects?: SuspectRule } {
  return suspects === undefined ? {} : { suspects };
}

/** Coverage of crash suspects in one claim: handed out alone, skipped, or claimed like any job. */
function countSuspects(predicted: ClaimPrediction, rule: SuspectRule, suspectsPending: boolean): void {
  if (!suspectsPending) return;
  if (predicted.alone) count('claim: a crash suspect handed out alone');
  if (predicted.suspectAhead)
    count(`claim: skipped a crash suspect (${rule}${predicted.jobs.length > 0 ? ', took others' : ''})`);
  if ((predicted.walk?.setAside.length ?? 0) > 0)
    count('claim: a lane set aside, only suspects within reach');
  if (predicted.skipsSpent) count('claim: skipped the most suspects a call skips');
  if (rule === 'any' && predicted.jobs.some((job) => job.suspect))
    count('claim: a crash suspect claimed as any');
}

/** The claim request's maxAttempts field, present only when the step gives one. */
function workerBudget(maxAttempts: number | undefined): { maxAttempts?: number } {
  return maxAttempts === undefined ? {} : { maxAttempts };
}

/**
 * Coverage of one claim's budgets (given each job's worker budget before the claim): jobs with
 * and without one of their own, and a worker's budget replacing another's.
 */
function countBudgets(m: Model, jobs: readonly ClaimedJobRecord[], before: Map<string, number | null>): void {
  for (const claimed of jobs) {
    const job = m.jobs.get(claimed.id)!;
    const was = before.get(claimed.id) ?? null;
    if (job.max !== null) count('claim: a job with its own budget');
    else if (was === null) count('claim: a job without its own budget, first claim');
    else if (was !== job.workerMax) count("claim: another worker's budget replaces the last");
    else count('claim: the same worker budget again');
  }
}

function workerBudgets(m: Model): Map<string, number | null> {
  return new Map(m.withRow().map((job) => [job.id, job.workerMax]));
}

function checkClaimed(
  m: Model,
  r: System,
  prefix: string,
  batch: ClaimBatch,
  predicted: ReturnType<Model['claim']>,
  what: string,
): void {
  const got = batch.jobs.map((j) => `${m.label(j.id)}@${j.attempt}`);
  r.note(`   ${prefix} got ${got.length > 12 ? `${got.length} jobs` : got.join(',') || 'nothing'}`);
  r.eq(m, batch.jobs, predicted.jobs, what);
  if (batch.jobs.some((job) => job.traceContext !== undefined))
    count('claim: a job hands back its trace context');
  if (batch.jobs.some((job) => job.traceContext === undefined)) count('claim: a job with no trace context');
  r.eq(m, batch.suspectAhead, predicted.suspectAhead, 'claim: skipped a crash suspect');
  r.isServerTime(m, batch.leaseDeadline - LEASE_MS, 'claim: lease deadline - lease');
  r.isServerTime(m, batch.serverNow, 'claim: server now');
  r.eq(
    m,
    batch.limitedUntil !== null,
    predicted.limited,
    'claim: limited until (held, or no rate room left)',
  );
  if (batch.limitedUntil !== null && !(batch.limitedUntil > batch.serverNow)) {
    r.fail(m, `claim: limited until ${batch.limitedUntil}, not after the server's now ${batch.serverNow}`);
  }
  // design.md: active never exceeds globalConcurrency at claim; starts in a window never exceed its max.
  const { gc, rm } = m.flow.settings;
  if (gc !== undefined && batch.jobs.length > 0 && m.inPlace('active').length > gc) {
    r.fail(m, `claim: ${m.inPlace('active').length} jobs active after a claim, globalConcurrency is ${gc}`);
  }
  if (rm !== undefined && batch.jobs.length > 0 && (m.flow.rate?.sum ?? 0) > rm) {
    r.fail(m, `claim: ${m.flow.rate?.sum} starts in the rate window, its max is ${rm}`);
  }
  if (predicted.nextRunAt === 'unknown') {
    if (batch.nextRunAt === null) r.fail(m, 'claim reported no next run-at, but schedule is not empty');
  } else {
    r.eq(m, batch.nextRunAt, predicted.nextRunAt, 'claim: next run-at in schedule');
  }
}

/**
 * A repeated claim answers with its recorded deadline and the jobs that claim still holds
 * (found by that deadline and its claimant prefix), and the next run-at as it is now.
 */
function checkClaimRepeat(r: System, prefix: string) {
  return (m: Model, first: Outcome<ClaimBatch>, again: Outcome<unknown>): void => {
    const was = r.value(m, first, 'claim');
    const batch = r.value(m, again, `repeat of claim ${prefix}`) as ClaimBatch;
    const predicted = m.claimRepeat(prefix, was.leaseDeadline);
    count(
      `repeat claim: ${was.jobs.length === 0 ? 'had none' : predicted.jobs.length === was.jobs.length ? 'all still held' : 'some ended since'}`,
    );
    r.eq(m, batch.leaseDeadline, was.leaseDeadline, `repeat of claim ${prefix}: the recorded lease deadline`);
    r.eq(m, batch.jobs, predicted.jobs, `repeat of claim ${prefix}: the jobs that claim still holds`);
    r.eq(m, batch.suspectAhead, false, `repeat of claim ${prefix}: meets no suspect`);
    if (predicted.nextRunAt === 'unknown') {
      if (batch.nextRunAt === null)
        r.fail(m, 'repeated claim reported no next run-at, but schedule is not empty');
    } else {
      r.eq(m, batch.nextRunAt, predicted.nextRunAt, `repeat of claim ${prefix}: next run-at now`);
    }
  };
}

export class Claim extends Step {
  constructor(
    readonly count: number,
    readonly worker: number,
    readonly promoteLimit: number,
    /** Also when there is nothing to claim or promote (a no-op that must change nothing). */
    readonly evenIfIdle: boolean,
    readonly lost: boolean,
    /** The claiming worker's maxAttempts (undefined: the built-in default). */
    readonly maxAttempts?: number,
    /** How crash suspects are handed out (undefined: the wrapper's default). */
    readonly suspects?: SuspectRule,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return this.evenIfIdle || !m.claimIsNoop(this.promoteLimit);
  }
  toString(): string {
    const idle = this.evenIfIdle ? ' (even if idle)' : '';
    const max = this.maxAttempts === undefined ? '' : ` maxAttempts=${this.maxAttempts}`;
    const rule = this.suspects === undefined ? '' : ` suspects=${this.suspects}`;
    return `claim n=${this.count} by w${this.worker}${max}${rule} promote<=${this.promoteLimit}${idle}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    await claimAndCheck(m, r, this);
  }
}

/**
 * Two workers claim at the same moment: both calls are in flight together on one connection,
 * so they run back to back (in the order sent) and often share a lease deadline, which is
 * what a repeat of either tells its own jobs apart by (with the claimant prefix).
 */
export class ClaimTogether extends Step {
  constructor(
    readonly counts: readonly [number, number],
    readonly promoteLimit: number,
    /** Each worker's maxAttempts (undefined: the built-in default). */
    readonly maxes: readonly [number | undefined, number | undefined] = [undefined, undefined],
    /** Each worker's suspects rule (undefined: the wrapper's default). */
    readonly rules: readonly [SuspectRule | undefined, SuspectRule | undefined] = [undefined, undefined],
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return !m.claimIsNoop(this.promoteLimit);
  }
  toString(): string {
    const [a, b] = this.maxes.map(
      (max, worker) =>
        (max === undefined ? '' : ` maxAttempts=${max}`) +
        (this.rules[worker] === undefined ? '' : ` suspects=${this.rules[worker]}`),
    );
    return `claim together: w0 n=${this.counts[0]}${a} and w1 n=${this.counts[1]}${b} promote<=${this.promoteLimit}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    // Both go out before either is awaited; Redis runs them in the order sent.
    const prefixes = [r.claimantPrefix(0), r.claimantPrefix(1)];
    const answers = await Promise.all(
      prefixes.map((prefix, worker) =>
        settle(
          claimJobs(r.ctx, {
            count: this.counts[worker],
            leaseMs: LEASE_MS,
            claimantPrefix: prefix,
            promoteLimit: this.promoteLimit,
            ...workerBudget(this.maxes[worker]),
            ...suspectRule(this.rules[worker]),
          }),
        ),
      ),
    );
    const batches = answers.map((answer, worker) => r.value(m, answer, `claim by w${worker} (together)`));
    if (batches[0].leaseDeadline === batches[1].leaseDeadline) count('claim together: same deadline');
    for (const worker of [0, 1]) {
      const request = {
        n: this.counts[worker],
        promoteLimit: this.promoteLimit,
        maxAttempts: this.maxes[worker],
        suspects: this.rules[worker],
      };
      await recordTogether(m, r, prefixes[worker], request, batches[worker]);
    }
  }
}

/** Checks one claim of a pair (already answered) against the model and keeps it for repeats. */
async function recordTogether(
  m: Model,
  r: System,
  prefix: string,
  {
    n,
    promoteLimit,
    maxAttempts,
    suspects,
  }: { n: number; promoteLimit: number; maxAttempts: number | undefined; suspects: SuspectRule | undefined },
  batch: ClaimBatch,
): Promise<void> {
  const repeat = (): Promise<ClaimBatch> =>
    claimJobs(r.ctx, {
      count: n,
      leaseMs: LEASE_MS,
      claimantPrefix: prefix,
      promoteLimit,
      ...workerBudget(maxAttempts),
      ...suspectRule(suspects),
    });
  let answered = false;
  await r.send(m, {
    kind: 'claim',
    requestId: prefix,
    lost: false,
    // The first send is the answer already in hand; later repeats go to Redis.
    run: () => {
      if (answered) return repeat();
      answered = true;
      return Promise.resolve(batch);
    },
    checkRepeat: checkClaimRepeat(r, prefix),
    comparable: repeatable,
  });
  const budgets = workerBudgets(m);
  const suspectsPending = m.inPlace('pending').some((job) => job.suspect);
  const predicted = m.claim(n, prefix, promoteLimit, batch.leaseDeadline, maxAttempts, suspects);
  countBudgets(m, predicted.jobs, budgets);
  countSuspects(predicted, suspects ?? 'any', suspectsPending);
  countFlow(m, predicted, []);
  checkClaimed(m, r, prefix, batch, predicted, `claim ${prefix} of two at once (in the order sent)`);
}
