/**
 * obliterate, every chunk to the last (as the service calls it): refused while a lease lives
 * unless forced; else every job and the queue's own keys go, active jobs announced on the
 * cancels stream, and the events stream begins again with the last call's event. The run goes
 * on with the same queue afresh (enqueues, claims and settings start from nothing).
 */
import { CANCELS_KEEP_MS, obliterateChunk, QueueBusyError, WALK_START } from '@app/echomq/internal';
import * as control from '../control';
import type { Model } from '../reference';
import { count, type System } from '../system';
import { asSet, CALLS_MAX, newestEvents } from './bulk-control';
import { lostTag, Step } from './step';

export class Obliterate extends Step {
  constructor(
    readonly force: boolean,
    readonly limit: number,
    readonly lost: boolean,
  ) {
    super();
  }
  applicable(m: Readonly<Model>): boolean {
    // Late in a run, once there is something to obliterate; the queue goes on afresh.
    return m.steps >= 15;
  }
  toString(): string {
    return `obliterate${this.force ? ' (force)' : ''}, chunks of ${this.limit}${lostTag(this.lost)}`;
  }
  protected async exec(m: Model, r: System): Promise<void> {
    const live = control.liveLeases(m);
    if (!this.force && live > 0) {
      const before = await r.snapshot(m);
      const requestId = r.requestId('obliterate');
      const options = { force: false, limit: this.limit, removedBefore: 0, cursor: WALK_START };
      const outcome = await r.send(m, {
        kind: 'obliterate',
        requestId,
        lost: this.lost,
        run: () => obliterateChunk(r.ctx, options, requestId),
      });
      const error = r.refused(m, outcome, QueueBusyError, 'obliterate while leases live');
      r.eq(m, error.active, live, 'QueueBusyError: the live leases');
      count('obliterate: refused (live leases)');
      await r.expectUnchanged(m, before, 0, 'a refused obliterate');
      return;
    }
    const removed: number[] = [];
    let cursor = WALK_START;
    for (let done = false; !done;) {
      if (removed.length >= CALLS_MAX) r.fail(m, `obliterate: not done after ${CALLS_MAX} calls`);
      const requestId = r.requestId('obliterate');
      const options = {
        force: this.force,
        limit: this.limit,
        removedBefore: removed.reduce((a, b) => a + b, 0),
        cursor,
      };
      const outcome = await r.send(m, {
        kind: 'obliterate',
        requestId,
        lost: this.lost && removed.length === 0,
        run: () => obliterateChunk(r.ctx, options, requestId),
      });
      const chunk = r.value(m, outcome, 'obliterate chunk');
      // Nothing comes in behind the walk here, so it never starts again.
      r.eq(m, chunk.again, false, 'obliterate: a new walk without new pending jobs');
      removed.push(chunk.removed);
      ({ done, cursor } = chunk);
    }
    const active = m.inPlace('active').length;
    const expected = control.obliterateAll(m);
    const total = removed.reduce((a, b) => a + b, 0);
    count(
      `obliterate: ${removed.length === 1 ? 'one chunk' : 'several chunks'}${active > 0 ? ', active jobs cancelled' : ''}`,
    );
    r.eq(m, total, expected.length, 'obliterate: the jobs removed in all');
    // The stream began again with the last call's event: its ids, done and the total.
    const events = await newestEvents(r, 2);
    r.eq(m, events.length, 1, 'obliterate: the events stream holds only the last event');
    const [last] = events;
    r.eq(
      m,
      [last.type, last.fields],
      ['obliterated', { done: '1', removed: String(total) }],
      'obliterate: the last event',
    );
    r.eq(m, last.ids.length, removed[removed.length - 1], "obliterate: the last event has its call's jobs");
    // One call: its event names every job; else the last call's are among them.
    if (removed.length === 1) r.eq(m, asSet(last.ids), asSet(expected), 'obliterate: the jobs of the event');
    const known = new Set(expected);
    if (!last.ids.every((id) => known.has(id)))
      r.fail(m, `obliterate: the last event names ${last.ids.join(',')}`);
    m.events.push({ type: 'obliterated', ids: last.ids.join(','), fields: last.fields });
    if (m.cancels.length > 0) {
      const pttl = await r.redis.pttl(r.ctx.keys.cancels);
      if (!(pttl > 0 && pttl <= CANCELS_KEEP_MS))
        r.fail(m, `the cancels stream has PTTL ${pttl} after obliterate`);
    }
  }
}
