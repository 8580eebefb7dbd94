/**
 * Flow control's own calls: the shared limits (set-limits), a lane's weight and cap
 * (set-lane), pausing and resuming a lane, a throttle (a handler's RateLimitedError: the job
 * back to pending without spending its attempt, the queue or its lane held back), and time
 * passing for a lane timer (its score rewritten into the past) or the queue's hold (deleted,
 * as its PX running out would). Each write call takes a request id and records its reply.
 */
import {
  type FlowLimits,
  pauseLane,
  resumeLane,
  setLaneSettings,
  StaleJobError,
  throttleJob,
  writeLimits,
} from '@app/echomq/internal';
import { type SettingField } from '../flow';
import type { Model } from '../reference';
import { count, type System } from '../system';
import { type ClaimPick, lostTag, resolveClaim, showClaim, Step } from './step';

/** The settings fields a partial FlowLimits writes ('' = null clears). */
function limitFields(limits: Partial<FlowLimits>): [SettingField, number | null][] {
  const out: [SettingField, number | null][] = [];
  const rate = (value: FlowLimits['rateLimit'] | undefined, max: SettingField, window: SettingField) => {
    if (value === undefined) return;
    out.push([max, value === null ? null : value.max], [window, value === null ? null : value.windowMs]);
  };
  rate(limits.rateLimit, 'rm', 'rw');
  if (limits.globalConcurrency !== undefined) out.push(['gc', limits.globalConcurrency]);
  if (limits.laneConcurrency !== undefined) out.push(['lc', limits.laneConcurrency]);
  rate(limits.laneRateLimit, 'lm', 'lw');
  return out;
}

function countRestored(m: Model): void {
  for (const why of m.restored.splice(0)) count(`flow: lane restored (${why.replace(/^\S+ by /, 'by ')})`);
}

export class SetLimits extends Step {
  constructor(
    readonly limits: Partial<FlowLimits>,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(): boolean {
    return true;
  }
  toString(): string {
    return `set limits ${JSON.stringify(this.limits)}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const requestId = r.requestId('setLimits');
    const outcome = await r.send(m, {
      kind: 'setLimits',
      requestId,
      lost: this.lost,
      run: () => writeLimits(r.ctx, this.limits, requestId),
    });
    r.value(m, outcome, 'set limits');
    for (const lane of m.flow.writeLimits(limitFields(this.limits))) m.restored.push(`${lane} by set limits`);
    countRestored(m);
  }
}

export class SetLane extends Step {
  constructor(
    readonly lane: string,
    readonly settings: { weight?: number | null; concurrency?: number | null },
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(): boolean {
    return true;
  }
  toString(): string {
    return `set lane ${this.lane} ${JSON.stringify(this.settings)}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const requestId = r.requestId('setLane');
    const outcome = await r.send(m, {
      kind: 'setLane',
      requestId,
      lost: this.lost,
      run: () => setLaneSettings(r.ctx, this.lane, this.settings, requestId),
    });
    r.value(m, outcome, 'set lane');
    const fields: ['w' | 'k', number | null][] = [];
    if (this.settings.weight !== undefined) fields.push(['w', this.settings.weight]);
    if (this.settings.concurrency !== undefined) fields.push(['k', this.settings.concurrency]);
    if (m.flow.setLane(this.lane, fields)) m.restored.push(`${this.lane} by set lane`);
    countRestored(m);
  }
}

export class PauseLane extends Step {
  constructor(
    readonly lane: string,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(): boolean {
    return true;
  }
  toString(): string {
    return `pause lane ${this.lane}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const requestId = r.requestId('pauseLane');
    const outcome = await r.send(m, {
      kind: 'pauseLane',
      requestId,
      lost: this.lost,
      run: () => pauseLane(r.ctx, this.lane, requestId),
    });
    const expected = m.pauseLane(this.lane);
    count(`flow: lane paused${expected ? '' : ' (already)'}`);
    r.eq(m, r.value(m, outcome, 'pause lane'), expected, 'pause lane: true when it was not paused');
  }
}

export class ResumeLane extends Step {
  constructor(
    readonly lane: string,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.flow.pausedLanes.size > 0 || this.lost;
  }
  toString(): string {
    return `resume lane ${this.lane}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    // Mostly a lane that is paused (the generated one when it is).
    const paused = [...m.flow.pausedLanes].sort();
    const lane = m.flow.pausedLanes.has(this.lane) || paused.length === 0 ? this.lane : paused[0];
    r.note(`   lane ${lane}`);
    const requestId = r.requestId('resumeLane');
    const outcome = await r.send(m, {
      kind: 'resumeLane',
      requestId,
      lost: this.lost,
      run: () => resumeLane(r.ctx, lane, requestId),
    });
    const expected = m.resumeLane(lane);
    count(`flow: lane resumed${expected ? '' : ' (was not paused)'}`);
    r.eq(m, r.value(m, outcome, 'resume lane'), expected, 'resume lane: true when it was paused');
    countRestored(m);
  }
}

/** A handler threw RateLimitedError: its job back to pending, the queue or its lane held back. */
export class Throttle extends Step {
  constructor(
    readonly pick: ClaimPick,
    readonly scope: 'queue' | 'lane',
    readonly holdMs: number,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.claims.length > 0;
  }
  toString(): string {
    return `throttle ${JSON.stringify(this.pick)} ${this.scope} ${this.holdMs} ms${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const ref = resolveClaim(m, this.pick);
    r.note(`   claim ${showClaim(m, ref, this.pick)}`);
    const stale = !m.holds(ref);
    const before = stale ? await r.snapshot(m) : null;
    const requestId = r.requestId('throttle');
    const outcome = await r.send(m, {
      kind: 'throttle',
      requestId,
      lost: this.lost,
      run: () => throttleJob(r.ctx, ref, this.holdMs, this.scope, requestId),
    });
    if (before) {
      const error = r.refused(m, outcome, StaleJobError, 'stale throttle');
      r.eq(m, [error.id, error.attempt], [ref.id, ref.attempt], 'StaleJobError names the claim');
      m.throttle(ref, this.holdMs, this.scope);
      await r.expectUnchanged(m, before, 1, 'a stale throttle');
      return;
    }
    r.value(m, outcome, 'throttle');
    count(`flow: throttle, scope ${this.scope}`);
    if (m.jobs.get(ref.id)!.suspect) count('flow: throttle clears a crash suspect');
    m.throttle(ref, this.holdMs, this.scope);
    countRestored(m);
  }
}

/**
 * Time passes for flow control: a lane timer (a rate-held or throttled lane's) is rewritten
 * into the past, so the next claim finds it due; or the queue's hold ends (its key deleted,
 * as its PX running out would: the run never outlives a hold).
 */
export class FlowTime extends Step {
  constructor(
    readonly what: 'laneTimer' | 'hold',
    readonly index: number,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return this.what === 'hold' ? m.flow.holdMs !== null : m.flow.timers.size + m.flow.holds.size > 0;
  }
  toString(): string {
    return `time passes: ${this.what === 'hold' ? "the queue's hold ends" : `lane timer #${this.index} runs out`}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    count(`time passes: ${this.what}`);
    if (this.what === 'hold') {
      await r.redis.del(r.ctx.keys.hold);
      m.flow.holdMs = null;
      return;
    }
    // Rate timers (lane-timers) and throttle holds (lane-holds), in one list.
    const entries = [
      ...[...m.flow.timers.keys()]
        .sort()
        .map((lane) => ({ lane, key: r.ctx.keys.laneTimers, map: m.flow.timers })),
      ...[...m.flow.holds.keys()]
        .sort()
        .map((lane) => ({ lane, key: r.ctx.keys.laneHolds, map: m.flow.holds })),
    ];
    const { lane, key, map } = entries[this.index % entries.length];
    const past = m.pastScore(false);
    r.note(`   ${key === r.ctx.keys.laneHolds ? 'hold' : 'timer'} of lane ${lane} -> ${past}`);
    await r.redis.zadd(key, 'XX', past, lane);
    map.set(lane, { due: true, value: past });
  }
}
