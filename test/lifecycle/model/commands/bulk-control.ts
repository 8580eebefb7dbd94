/**
 * The chunked removals: drain and clean (obliterate: ./obliterate.ts), each a loop of script calls as the
 * service runs them (the cursor of the walk over the lanes' pending sets carried from call to
 * call), with the model's queues small enough for one chunk of CONTROL_CHUNK_MAX and
 * WALK_SETS_MAX sets, or a small limit so the walk resumes. The walk's order of lanes is not
 * the model's to predict: what the calls removed in all is compared as a set, and the events
 * are taken as Redis wrote them once their ids are known to be right. Every call takes a
 * request id; the first is sent twice when its reply is lost.
 */
import {
  CLEAN_AGE_MAX_MS,
  cleanChunk,
  type CleanState,
  drainChunk,
  type JobId,
  WALK_START,
} from '@app/echomq/internal';
import * as control from '../control';
import { ageAt } from '../ids';
import type { Model } from '../reference';
import { count, type System } from '../system';
import { lostTag, resolveId, Step } from './step';

/** More calls than any loop here needs (a small limit over a run's jobs and lanes). */
export const CALLS_MAX = 300;

/** Ids as a sorted list, for comparing as sets. */
export function asSet(ids: readonly string[]): string[] {
  return [...ids].sort();
}

/** The newest `n` entries of the events stream, oldest first, as { type, ids, fields }. */
export async function newestEvents(
  r: System,
  n: number,
): Promise<{ type: string; ids: string[]; fields: Record<string, string> }[]> {
  if (n === 0) return [];
  const entries = await r.redis.xrevrange(r.ctx.keys.events, '+', '-', 'COUNT', n);
  return entries.reverse().map(([, flat]) => {
    const fields: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
    const { type, ids, ...rest } = fields;
    return { type, ids: ids === '' ? [] : ids.split(','), fields: rest };
  });
}

export class Drain extends Step {
  constructor(
    readonly keepScheduled: boolean,
    readonly limit: number,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.inPlace('pending').length + (this.keepScheduled ? 0 : m.inPlace('schedule').length) > 0;
  }
  toString(): string {
    return `drain${this.keepScheduled ? ' (keep scheduled)' : ''}, chunks of ${this.limit}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const counts: number[] = [];
    let cursor = WALK_START;
    for (let more = true; more;) {
      if (counts.length >= CALLS_MAX) r.fail(m, `drain: still more after ${CALLS_MAX} calls`);
      const requestId = r.requestId('drain');
      const options = { keepScheduled: this.keepScheduled, limit: this.limit, cursor };
      const outcome = await r.send(m, {
        kind: 'drain',
        requestId,
        lost: this.lost && counts.length === 0,
        run: () => drainChunk(r.ctx, options, requestId),
      });
      const chunk = r.value(m, outcome, 'drain chunk');
      counts.push(chunk.count);
      ({ more, cursor } = chunk);
    }
    const expected = control.drainAll(m, this.keepScheduled);
    count(
      `drain: ${counts.length === 1 ? 'one chunk' : 'several chunks'}${this.keepScheduled ? ' (keep scheduled)' : ''}`,
    );
    r.eq(m, cursor, '', 'drain: the walk is done');
    const events = await newestEvents(r, counts.filter((n) => n > 0).length);
    r.eq(
      m,
      events.map((e) => e.type),
      events.map(() => 'drained'),
      'drain: one drained event per call that removed jobs',
    );
    const ids = events.flatMap((event) => event.ids);
    r.eq(m, asSet(ids), asSet(expected), 'drain: the jobs removed (drained events)');
    r.eq(
      m,
      events.map((e) => e.ids.length),
      counts.filter((n) => n > 0),
      "drain: each event has its call's jobs",
    );
    for (const event of events) m.emit('drained', event.ids);
  }
}

/** The age bound of a clean: everything, nothing, or up to one job's id time (by index). */
export type CleanAge = 'all' | 'none' | number;

export class Clean extends Step {
  constructor(
    readonly state: CleanState,
    readonly age: CleanAge,
    readonly limit: number,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    return m.inPlace(this.state).length > 0;
  }
  toString(): string {
    const age = typeof this.age === 'number' ? `up to #${this.age}'s time` : this.age;
    return `clean ${this.state} (${age}), chunks of ${this.limit}${lostTag(this.lost)}`;
  }
  /** What to send, and the id time before which the model counts a job old enough. */
  private bound(m: Model, r: System): { olderThanMs: number; cutoff: number } {
    if (this.age === 'all') return { olderThanMs: 0, cutoff: Infinity };
    if (this.age === 'none') return { olderThanMs: CLEAN_AGE_MAX_MS, cutoff: -Infinity };
    const pool = m.inPlace(this.state).map((job) => job.id);
    const id = pool[this.age % pool.length];
    const { ageMs, cutoff } = ageAt(id, r.serverNow);
    r.note(`   jobs minted up to ${m.label(id)}'s time are old enough`);
    return { olderThanMs: ageMs, cutoff };
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const { olderThanMs, cutoff } = this.bound(m, r);
    const state = this.state;
    // schedule: the caller names candidates, oldest first; a few that are not scheduled among them.
    const candidates =
      state === 'schedule'
        ? asSet([
            ...new Set([
              ...m.inPlace('schedule').map((job) => job.id),
              resolveId(m, 'pending', this.limit),
              resolveId(m, 'any', m.steps),
            ]),
          ]).slice(0, this.limit)
        : undefined;
    const chunks: string[][] = [];
    let cursor = state === 'pending' ? WALK_START : '';
    do {
      if (chunks.length >= CALLS_MAX) r.fail(m, `clean: the walk goes on after ${CALLS_MAX} calls`);
      const requestId = r.requestId('clean');
      const chunk = {
        state,
        olderThanMs,
        limit: this.limit,
        ...(state === 'pending' ? { cursor } : {}),
        ...(candidates ? { candidates: candidates as JobId[] } : {}),
      };
      const outcome = await r.send(m, {
        kind: 'clean',
        requestId,
        lost: this.lost && chunks.length === 0,
        run: () => cleanChunk(r.ctx, chunk, requestId),
      });
      const done = r.value(m, outcome, 'clean chunk');
      chunks.push(done.ids);
      cursor = done.cursor;
    } while (cursor !== '');
    const ids = chunks.flat();
    if (state === 'pending') {
      r.eq(m, asSet(ids), asSet(control.cleanPending(m, cutoff)), 'clean pending: the jobs removed');
    } else {
      const expected =
        state === 'dead'
          ? control.cleanDead(m, cutoff, this.limit)
          : control.cleanScheduled(m, cutoff, candidates!);
      r.eq(m, ids, expected, `clean ${state}: the jobs removed, in order`);
    }
    const left = m.inPlace(state).length;
    count(
      `clean ${state}: ${ids.length === 0 ? 'none' : left > 0 ? 'some' : 'all'}${chunks.length > 1 ? ' (several chunks)' : ''}`,
    );
    for (const chunk of chunks) m.emit('cleaned', chunk, { state });
  }
}
