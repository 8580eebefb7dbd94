/** One transition as recorded on a queue's event stream. */
export interface QueueEvent {
  /** The stream entry id (server time - sequence). */
  readonly streamId: string;
  /** enqueued | claimed | extended | completed | failed | dead | released | reaped | promoted | retried | removed | progress | throttled | lane-paused | lane-resumed */
  readonly type: string;
  /** The jobs the event is about (one for per-job events, many for batch events). */
  readonly ids: readonly string[];
  /** Every field of the entry as written by the script (results, omitted, error, attempt, ...). */
  readonly fields: Readonly<Record<string, string>>;
}

/**
 * Called with every event of a queue. A listener may be async; whatever it throws or
 * rejects with is logged and never reaches the reader, other listeners or waits.
 */
export type QueueEventListener = (event: QueueEvent) => void | PromiseLike<void>;

/** The events that end a job: the only ones a wait is told about. */
export const FINISHING_TYPES: ReadonlySet<string> = new Set([
  'completed',
  'dead',
  'removed',
  // bulk removals: the job is gone (see verdictOf)
  'drained',
  'cleaned',
  'obliterated',
  'trimmed',
]);

export function parseEntry(streamId: string, flat: readonly string[]): QueueEvent {
  const fields: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  return { streamId, type: fields.type ?? '', ids: splitIds(fields.ids), fields };
}

/** A comma-separated id list as the scripts write it ('' or absent for none). */
export function splitIds(text: string | undefined): string[] {
  return text ? text.split(',') : [];
}

/** Compares two stream ids ("ms-seq") numerically. */
export function compareStreamIds(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number);
  const [bm, bs] = b.split('-').map(Number);
  return am !== bm ? am - bm : as - bs;
}
