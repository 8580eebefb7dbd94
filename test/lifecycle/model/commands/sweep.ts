/**
 * The reaper's two calls: reap (expired leases back to pending, or to dead) and promote (due
 * run-ats to pending), each bounded by its limit, up to the documented maximum. Neither takes a
 * request id: both are idempotent (a repeat moves only what is still due).
 */
import { promoteDue, reapExpired } from '@app/echomq/internal';
import { SCRIPT_BATCH_MAX } from '@app/echomq/scripts/limits';
import { exactScore, type Model } from '../reference';
import { count, type System } from '../system';
import { countTrimmed, type DeadKeep, resolveDeadKeep, showDeadKeep } from './dead';
import { Step } from './step';

function size(n: number): string {
  return n >= 1000 ? '1000' : n > 2 ? 'many' : String(n);
}

export class Reap extends Step {
  constructor(
    readonly limit: number,
    readonly evenIfIdle: boolean,
    readonly dead: DeadKeep = null,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return this.evenIfIdle || m.dueIn('active').length > 0;
  }
  toString(): string {
    return `reap limit=${this.limit}${this.evenIfIdle ? ' (even if idle)' : ''}${showDeadKeep(this.dead)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const due = m.dueIn('active');
    const before = due.length === 0 ? await r.snapshot(m) : null;
    const going = due.slice(0, this.limit).map((job) => job.id);
    const { retention, rule } = resolveDeadKeep(m, r, this.dead, going);
    const out = await reapExpired(r.ctx, this.limit, retention);
    if (due.some((job) => job.base > 0)) count('reap: with a moved budget base');
    if (due.some((job) => job.max === null)) count("reap: by the claiming worker's budget");
    if (due.some((job) => job.suspect)) count('reap: a crash suspect reaped again');
    if (due.slice(0, this.limit).some((job) => job.stack !== null))
      count("reap: drops an earlier attempt's stack");
    const expected = m.reap(this.limit, rule);
    countTrimmed(m);
    if (expected.toPending > 0) count('reap: -> pending');
    if (expected.toDead > 0) count('reap: -> dead');
    if (expected.more) count(`reap: more left (limit ${size(this.limit)}, ${size(due.length)} due)`);
    r.eq(m, out, expected, 'reap outcome');
    if (before) await r.expectUnchanged(m, before, 0, 'a reap with no expired lease');
  }
}

export class Promote extends Step {
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
    const due = m.dueIn('schedule').length;
    const before = due === 0 ? await r.snapshot(m) : null;
    const out = await promoteDue(r.ctx, this.limit);
    const expected = m.promote(this.limit);
    if (expected.promoted > 0) count(`promote: some${expected.more ? ', more left' : ''}`);
    if (expected.more) count(`promote: more left (limit ${size(this.limit)}, ${size(due)} due)`);
    r.eq(m, out, expected, 'promote outcome');
    if (before) await r.expectUnchanged(m, before, 0, 'a promote with nothing due');
  }
}

/**
 * A worker process dies holding one claim: the leases of every job that claim handed it (one
 * claimant prefix and deadline) run out at once, and the reaper returns them, each a crash
 * suspect now. Time passes as in PassTime: the scores are rewritten into the past.
 */
export class Crash extends Step {
  constructor(readonly index: number) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.inPlace('active').some((job) => !job.due);
  }
  toString(): string {
    return `a worker dies holding the claim of active #${this.index}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const live = m.inPlace('active').filter((job) => !job.due);
    const victim = live[this.index % live.length];
    const prefix = victim.claimant!.slice(0, victim.claimant!.lastIndexOf('.'));
    const deadline = exactScore(victim);
    const held = live.filter((job) => job.claimant!.startsWith(`${prefix}.`) && exactScore(job) === deadline);
    r.note(`   claim ${prefix}: ${held.map((job) => m.label(job.id)).join(',')}`);
    const past = m.pastScore(false);
    for (const job of held) {
      await r.redis.zadd(r.ctx.keys.active, 'XX', past, job.id);
      m.passTime(job, past);
    }
    count(`crash: a claim of ${held.length > 1 ? 'several jobs' : 'one job'}`);
    const out = await reapExpired(r.ctx, SCRIPT_BATCH_MAX);
    r.eq(m, out, m.reap(SCRIPT_BATCH_MAX), 'reap after a crash');
  }
}
