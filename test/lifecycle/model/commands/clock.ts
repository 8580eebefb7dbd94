/**
 * Time passing and pausing. Time passes for one thing (or for every lease / run-at at once) by
 * moving its deadline into the past on the server's own terms: a lease deadline (active score)
 * or a run-at (schedule score) is rewritten to a past time; a retained row's, an idempotency
 * key's or a reply record's expiry is set to a past instant (PEXPIREAT), which Redis applies
 * at once. The server clock stays the only clock.
 */
import type { Model } from '../reference';
import { count, type System } from '../system';
import { Step } from './step';

export type Clockwork = 'lease' | 'runAt' | 'retention' | 'idempotency' | 'reply' | 'dedupe';

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
    case 'reply':
      return m.replyIds();
    case 'dedupe':
      return [...m.keyed.keys()].sort();
  }
}

export class PassTime extends Step {
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
    const named = what === 'idempotency' || what === 'reply' || what === 'dedupe' ? target : m.label(target);
    r.note(`   ${what} of ${named} -> ${past}`);
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
      case 'dedupe':
        // A debounce or throttle key runs out (its window, or its job's run-at, is over).
        await r.redis.pexpireat(target, past);
        m.keyed.delete(target);
        return;
      case 'reply':
        // The replay window of this call is over: a repeat of it is a new call (never sent here).
        await r.redis.pexpireat(k.reply(target), past);
        m.replyExpires(target);
        r.sent.delete(target);
        return;
    }
  }
}

/**
 * Every lease (or every run-at) runs out at once, so a reap (promote) finds more due than its
 * limit. The past times are one instant for all, or distinct in id order, or in reverse id
 * order (then the reaper's order, by score, is the reverse of mint order).
 */
export class PassTimeAll extends Step {
  constructor(
    readonly what: 'lease' | 'runAt',
    readonly order: 'same' | 'forward' | 'reverse',
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return clockworkTargets(m, this.what).length > 0;
  }
  toString(): string {
    return `time passes: every ${this.what} runs out (${this.order})`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const place = this.what === 'lease' ? 'active' : 'schedule';
    const jobs = m.inPlace(place);
    if (this.order === 'reverse') jobs.reverse();
    count(`time passes: every ${this.what} (${jobs.length >= 1000 ? '1000+' : 'fewer'})`);
    r.note(`   ${jobs.length} jobs in ${place}`);
    const set = this.what === 'lease' ? r.ctx.keys.active : r.ctx.keys.schedule;
    const pairs: (string | number)[] = [];
    jobs.forEach((job, i) => {
      const past = m.pastScore(this.order === 'same' && i > 0);
      m.passTime(job, past);
      pairs.push(past, job.id);
    });
    for (let i = 0; i < pairs.length; i += 1000) await r.redis.zadd(set, 'XX', ...pairs.slice(i, i + 1000));
  }
}

export class Pause extends Step {
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
    else {
      // resume also lifts a throttle's hold of the queue
      await r.redis.del(r.ctx.keys.paused, r.ctx.keys.hold);
      m.flow.holdMs = null;
    }
    m.paused = this.on;
  }
}
