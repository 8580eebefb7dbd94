import { parseQueueEvent, type AnyQueueEvent } from '@app/echomq/internal';
import { parseEntry } from '@app/echomq/events/queue-event';

const A = 'JOB0000000000A';
const B = 'JOB0000000000B';

/** A stream entry as XREAD returns it: the id and the flat field list the script wrote. */
function entry(...flat: string[]): AnyQueueEvent {
  return parseQueueEvent('q', parseEntry('1700000000123-4', flat));
}

describe('parseQueueEvent', () => {
  it('carries the queue, ids, stream position and server time on every event', () => {
    const event = entry('type', 'claimed', 'ids', `${A},${B}`);
    expect(event).toMatchObject({ type: 'claimed', queue: 'q', ids: [A, B], streamId: '1700000000123-4' });
    expect(event.at).toBe(1700000000123);
    expect(event.raw.fields).toEqual({ type: 'claimed', ids: `${A},${B}` });
  });

  it('decodes completed results aligned with the ids, with omitted and empty ones undefined', () => {
    const event = entry('type', 'completed', 'ids', `${A},${B}`, 'results', '[null,{"ok":1}]', 'omitted', A);
    expect(event).toMatchObject({ type: 'completed', results: [undefined, { ok: 1 }], omitted: [A] });
    const none = entry('type', 'completed', 'ids', A, 'results', '[]');
    expect(none).toMatchObject({ results: [undefined], omitted: [] });
  });

  it('never throws on results that are not JSON: they read as undefined', () => {
    expect(entry('type', 'completed', 'ids', A, 'results', '{oops')).toMatchObject({ results: [undefined] });
  });

  it('reads attempts as numbers; a dead event from the reaper has none', () => {
    expect(entry('type', 'failed', 'ids', A, 'attempt', '3', 'error', 'boom')).toMatchObject({
      type: 'failed',
      id: A,
      attempt: 3,
      error: 'boom',
    });
    expect(entry('type', 'dead', 'ids', A, 'attempt', '5', 'error', 'boom')).toMatchObject({ attempt: 5 });
    const reaped = entry('type', 'dead', 'ids', `${A},${B}`, 'error', 'lease expired');
    expect(reaped).toMatchObject({ ids: [A, B], attempt: undefined, error: 'lease expired' });
  });

  it('reads single-job events with their id, removed with its state and progress decoded', () => {
    expect(entry('type', 'retried', 'ids', A)).toMatchObject({ type: 'retried', id: A });
    expect(entry('type', 'removed', 'ids', A, 'from', 'schedule')).toMatchObject({ id: A, from: 'schedule' });
    expect(entry('type', 'progress', 'ids', A, 'progress', '{"pct":40}')).toMatchObject({
      id: A,
      progress: { pct: 40 },
    });
  });

  it('reads throttled with its attempt, hold and scope, and the lane events with their lane', () => {
    expect(entry('type', 'throttled', 'ids', A, 'attempt', '2', 'ms', '5000', 'scope', 'lane')).toMatchObject(
      {
        type: 'throttled',
        id: A,
        attempt: 2,
        ms: 5000,
        scope: 'lane',
      },
    );
    expect(entry('type', 'lane-paused', 'ids', '', 'lane', 'acme')).toMatchObject({ ids: [], lane: 'acme' });
    expect(entry('type', 'lane-resumed', 'ids', '', 'lane', 'acme')).toMatchObject({ type: 'lane-resumed' });
  });

  it('passes a type it does not know on as unrecognized, with its raw fields', () => {
    const event = entry('type', 'paused', 'ids', '', 'by', 'admin');
    expect(event).toMatchObject({ type: 'unrecognized', ids: [], fields: { type: 'paused', by: 'admin' } });
    expect(event.raw.type).toBe('paused');
  });
});
