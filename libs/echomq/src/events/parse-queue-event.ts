import type { JobId } from '../ids';
import type { RemovedFrom } from '../scripts/remove';
import { splitIds, type QueueEvent } from './queue-event';
import {
  QUEUE_EVENT_TYPES,
  type AnyQueueEvent,
  type QueueEventPayloads,
  type QueueEventType,
} from './queue-event-payloads';

const KNOWN: ReadonlySet<string> = new Set(QUEUE_EVENT_TYPES);

export function isQueueEventType(type: string): type is QueueEventType {
  return KNOWN.has(type);
}

/** The fields every payload carries. */
interface Base {
  readonly queue: string;
  readonly ids: readonly JobId[];
  readonly streamId: string;
  readonly at: number;
  readonly raw: QueueEvent;
}

type Parsers = { [K in QueueEventType]: (base: Base) => QueueEventPayloads[K] };

/** The ids the scripts write are minted by EchoMQ; they are not re-validated on the hot path. */
function jobIds(text: string | undefined): JobId[] {
  return splitIds(text) as JobId[];
}

/** JSON the scripts copied from a worker; a value that does not parse (never written by EchoMQ) reads as undefined. */
function decode(text: string | undefined): unknown {
  if (text === undefined || text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function completedResults(base: Base): unknown[] {
  const decoded = decode(base.raw.fields.results);
  const results: readonly unknown[] = Array.isArray(decoded) ? decoded : [];
  // null in the stream's array stands for "no result" and for a result left out.
  return base.ids.map((_, index) => (results[index] === null ? undefined : results[index]));
}

function optionalNumber(text: string | undefined): number | undefined {
  return text === undefined || text === '' ? undefined : Number(text);
}

const withIdsOnly =
  <T extends QueueEventType>(type: T) =>
  (base: Base) => ({ ...base, type });

const PARSERS: Parsers = {
  enqueued: withIdsOnly('enqueued'),
  claimed: withIdsOnly('claimed'),
  extended: withIdsOnly('extended'),
  released: withIdsOnly('released'),
  reaped: withIdsOnly('reaped'),
  promoted: withIdsOnly('promoted'),
  completed: (base) => ({
    ...base,
    type: 'completed',
    results: completedResults(base),
    omitted: jobIds(base.raw.fields.omitted),
  }),
  failed: (base) => ({
    ...base,
    type: 'failed',
    id: base.ids[0],
    attempt: Number(base.raw.fields.attempt),
    error: base.raw.fields.error ?? '',
  }),
  dead: (base) => ({
    ...base,
    type: 'dead',
    attempt: optionalNumber(base.raw.fields.attempt),
    error: base.raw.fields.error ?? '',
  }),
  retried: (base) => ({ ...base, type: 'retried', id: base.ids[0] }),
  removed: (base) => ({
    ...base,
    type: 'removed',
    id: base.ids[0],
    from: base.raw.fields.from as RemovedFrom,
  }),
  progress: (base) => ({
    ...base,
    type: 'progress',
    id: base.ids[0],
    progress: decode(base.raw.fields.progress),
  }),
  throttled: (base) => ({
    ...base,
    type: 'throttled',
    id: base.ids[0],
    attempt: Number(base.raw.fields.attempt),
    ms: Number(base.raw.fields.ms),
    scope: base.raw.fields.scope === 'lane' ? 'lane' : 'queue',
  }),
  'lane-paused': (base) => ({ ...base, type: 'lane-paused', lane: base.raw.fields.lane ?? '' }),
  'lane-resumed': (base) => ({ ...base, type: 'lane-resumed', lane: base.raw.fields.lane ?? '' }),
  debounced: withIdsOnly('debounced'),
  updated: withIdsOnly('updated'),
  drained: withIdsOnly('drained'),
  cleaned: withIdsOnly('cleaned'),
  obliterated: withIdsOnly('obliterated'),
  trimmed: withIdsOnly('trimmed'),
  'schedule-upserted': withIdsOnly('schedule-upserted'),
  'schedule-removed': withIdsOnly('schedule-removed'),
  repaired: (base) => ({
    ...base,
    type: 'repaired',
    kind: base.raw.fields.kind ?? '',
    count: Number(base.raw.fields.count ?? base.ids.length),
    to: splitIds(base.raw.fields.to),
    lanes: splitIds(base.raw.fields.lanes),
  }),
};

/** Milliseconds of a stream id ("ms-seq"): when Redis appended the entry. */
function streamTime(streamId: string): number {
  return Number(streamId.slice(0, streamId.indexOf('-')));
}

/**
 * The typed payload of one raw stream entry: numbers as numbers, ids as JobId[], results
 * and progress decoded from JSON. Never throws: an entry of a type this version does not
 * know comes back as an 'unrecognized' event with its raw fields, so listeners keep
 * working when a newer EchoMQ writes new types on the same stream.
 */
export function parseQueueEvent(queue: string, event: QueueEvent): AnyQueueEvent {
  const base: Base = {
    queue,
    ids: event.ids as readonly JobId[],
    streamId: event.streamId,
    at: streamTime(event.streamId),
    raw: event,
  };
  if (!isQueueEventType(event.type)) return { ...base, type: 'unrecognized', fields: event.fields };
  return PARSERS[event.type](base);
}
