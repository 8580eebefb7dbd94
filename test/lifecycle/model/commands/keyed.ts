/**
 * Enqueue under a debounce or throttle key (enqueue-keyed): debounce creates a job in schedule
 * at now + delay, or replaces the data (and name) of the key's job while it waits for a run-at
 * still ahead and never ran, pushing its run-at back (capped at the deadline its creating call
 * set, row 'dm' = first enqueue + maxWait: here maxWait = delay, so a capped run-at is exactly
 * that deadline; a later call's maxWait changes nothing); throttle creates a job
 * (pending, or scheduled with a delay) and answers 'matched' with it while its key lives.
 * Run-ats the server computes are read back (ZSCORE) within bounds, then known exactly.
 */
import { enqueueKeyed, type KeyedRule } from '@app/echomq/internal';
import { DEFAULT_LANE } from '../flow';
import { DEDUPE_KEYS, LATER_MS, type Model, type ModelJob } from '../reference';
import { CLOCK_SLACK_MS } from '../rows';
import { count, type System } from '../system';
import { traceContextFor, type TraceSpec } from './enqueue';
import { lostTag, Step } from './step';

const WINDOW_MS = LATER_MS;

export class KeyedEnqueue extends Step {
  constructor(
    readonly mode: 'debounce' | 'throttle',
    readonly key: number,
    /** debounce: with maxWait (= the delay); throttle: with a delay of its own. */
    readonly option: boolean,
    readonly named: boolean,
    readonly node: number,
    readonly lost: boolean,
    /** The trace context its producer leaves: kept by a created job only (a replaced one keeps its own). */
    readonly trace: TraceSpec = 'none',
  ) {
    super();
  }
  applicable(): boolean {
    return true;
  }
  toString(): string {
    const option = this.mode === 'debounce' ? ' maxWait' : ' delayed';
    const trace = this.trace === 'none' ? '' : ` trace=${this.trace}`;
    return `${this.mode} ${DEDUPE_KEYS[this.key % DEDUPE_KEYS.length]}${this.option ? option : ''}${this.named ? ' named' : ''}${trace}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const name = DEDUPE_KEYS[this.key % DEDUPE_KEYS.length];
    const k = r.ctx.keys;
    const redisKey = this.mode === 'debounce' ? k.debounce(name) : k.throttleKey(name);
    const rule: KeyedRule =
      this.mode === 'debounce'
        ? {
            kind: 'debounce',
            key: name,
            delayMs: WINDOW_MS,
            ...(this.option ? { maxWaitMs: WINDOW_MS } : {}),
          }
        : { kind: 'throttle', key: name, windowMs: WINDOW_MS };
    const id = r.mint(this.node);
    m.mint(id);
    const data = JSON.stringify({ keyed: m.label(id) });
    const traceContext = traceContextFor(id, this.trace);
    const record = {
      id,
      data,
      name: this.named ? 'mail' : '',
      delayMs: this.mode === 'throttle' && this.option ? LATER_MS : 0,
      runAtMs: 0,
      idempotencyKey: '',
      ...(traceContext === null ? {} : { traceContext }),
    };
    const held = m.keyed.get(redisKey);
    const heldJob = held === undefined ? undefined : m.jobs.get(held.id);
    const replaces =
      this.mode === 'debounce' &&
      heldJob !== undefined &&
      heldJob.place === 'schedule' &&
      !heldJob.due &&
      heldJob.attempts === 0 &&
      heldJob.debounceKey === name;
    const expected =
      this.mode === 'throttle' && held !== undefined
        ? { outcome: 'matched', id: held.id }
        : replaces
          ? { outcome: 'replaced', id: held!.id }
          : { outcome: 'created', id };
    const before = expected.outcome === 'matched' ? await r.snapshot(m) : null;
    r.note(`   ${expected.outcome} ${m.label(expected.id)}`);
    const requestId = r.requestId('enqueueKeyed');
    const outcome = await r.send(m, {
      kind: 'enqueueKeyed',
      requestId,
      lost: this.lost,
      freshIds: [id],
      run: () => enqueueKeyed(r.ctx, record, rule, this.named, requestId),
      recordedIf: () => true,
    });
    r.eq(m, r.value(m, outcome, this.mode), expected, `${this.mode}: outcome and id`);
    count(
      `${this.mode}: ${expected.outcome}${this.option ? (this.mode === 'debounce' ? ' (maxWait)' : ' (delayed)') : ''}`,
    );
    if (before) {
      // (a matched throttle records its reply: the only key it writes)
      await r.expectUnchanged(m, before, 0, 'a matched throttle');
      return;
    }
    if (expected.outcome === 'replaced') {
      const job = heldJob as { -readonly [K in keyof ModelJob]: ModelJob[K] };
      const runAt = Number(await r.redis.zscore(k.schedule, job.id));
      // The creating call's deadline (checked when it was created), whatever this call says;
      // maxWait = delay, so it is never later than now + delay.
      const deadline = await r.redis.hget(k.job(job.id), 'dm');
      if (deadline !== null)
        r.eq(m, runAt, Number(deadline), "debounce: a run-at capped at the creating call's deadline");
      else r.isServerTime(m, runAt - WINDOW_MS, 'debounce: pushed run-at - delay');
      job.data = data;
      if (this.named) job.name = 'mail';
      job.score = { kind: 'exact', value: runAt };
      m.keyed.set(redisKey, { id: job.id, ttlMs: runAt - r.serverNow + 1_000 + CLOCK_SLACK_MS });
      m.bump('debounced');
      m.emit('debounced', [job.id], { runAt: String(runAt) });
      return;
    }
    const job = m.createJob({
      id,
      data,
      name: record.name,
      lane: DEFAULT_LANE,
      traceContext,
      debounceKey: this.mode === 'debounce' ? name : null,
      score:
        this.mode === 'debounce' || record.delayMs > 0
          ? { kind: 'delayed', delay: WINDOW_MS, notBefore: r.serverNow }
          : null,
    });
    m.keyed.set(redisKey, { id, ttlMs: WINDOW_MS + (this.mode === 'debounce' ? 1_000 : 0) });
    if (this.mode === 'debounce') {
      // The deadline (row 'dm'): first enqueue + maxWait, only when the creating call gave one.
      const [first, deadline] = await r.redis.hmget(k.job(id), 'df', 'dm');
      const expected = this.option ? String(Number(first) + WINDOW_MS) : null;
      r.eq(m, deadline, expected, 'debounce: the deadline a creating call sets');
    }
    m.bump('enqueued');
    m.emit('enqueued', [job.id]);
  }
}
