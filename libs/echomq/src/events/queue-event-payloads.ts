import type { JobId } from '../ids';
import type { RemovedFrom } from '../scripts/remove';
import type { QueueEvent } from './queue-event';

/** The event types the transition scripts write on a queue's stream. */
export const QUEUE_EVENT_TYPES = [
  'enqueued',
  'claimed',
  'extended',
  'completed',
  'failed',
  'dead',
  'released',
  'reaped',
  'promoted',
  'retried',
  'removed',
  'progress',
  'throttled',
  'lane-paused',
  'lane-resumed',
  'debounced',
  'updated',
  'drained',
  'cleaned',
  'obliterated',
  'trimmed',
  'schedule-upserted',
  'schedule-removed',
  'repaired',
] as const;

export type QueueEventType = (typeof QUEUE_EVENT_TYPES)[number];

/** What every typed queue event carries. */
interface QueueEventBase<T extends string> {
  readonly type: T;
  readonly queue: string;
  /** The jobs the event is about: one for per-job events, up to a batch for the others. */
  readonly ids: readonly JobId[];
  /** The stream entry's id ("ms-seq"): the order of events on this queue. */
  readonly streamId: string;
  /** When Redis recorded the transition: ms since epoch on the Redis server's clock. */
  readonly at: number;
  /** The entry as read from the stream, with every field the script wrote. */
  readonly raw: QueueEvent;
}

/** A job with a single id: failed, retried, removed, progress. */
interface SingleJobEvent<T extends string> extends QueueEventBase<T> {
  readonly id: JobId;
}

/** New jobs went into pending (or schedule, when delayed). */
export type EnqueuedEvent = QueueEventBase<'enqueued'>;
/** A worker claimed these jobs (pending -> active); each claim's attempt went up by one. */
export type ClaimedEvent = QueueEventBase<'claimed'>;
/** A heartbeat moved these jobs' lease deadlines later. */
export type ExtendedEvent = QueueEventBase<'extended'>;
/** Shutdown gave these claimed jobs back to pending, their retry budget intact. */
export type ReleasedEvent = QueueEventBase<'released'>;
/** These leases expired and the reaper put the jobs back in pending (they had attempts left). */
export type ReapedEvent = QueueEventBase<'reaped'>;
/** These delayed or backing-off jobs reached their run-at and moved to pending. */
export type PromotedEvent = QueueEventBase<'promoted'>;

/**
 * These jobs completed. R is the handlers' result type, as the listener declares it (the
 * stream carries JSON, decoded here; nothing checks it against R).
 */
export interface CompletedEvent<R = unknown> extends QueueEventBase<'completed'> {
  /**
   * Aligned with `ids`: each job's result, undefined for a handler that returned nothing
   * and for a job whose result was left out of the event (see `omitted`).
   */
  readonly results: readonly (R | undefined)[];
  /**
   * Jobs whose result was too large for the event (over 1 KiB, or past 16 KiB for the
   * entry). Their row keeps it for at least 60 s: read it with QueueService.getJob.
   */
  readonly omitted: readonly JobId[];
}

/** The handler threw and the job will be tried again (it went to schedule or pending). */
export interface FailedEvent extends SingleJobEvent<'failed'> {
  /** The attempt (fencing token) that failed. */
  readonly attempt: number;
  /** The error's text, cut to 1 KiB (the row keeps up to 4 KiB). */
  readonly error: string;
}

/**
 * Jobs went to dead: the last attempt of the budget failed, the error was unrecoverable
 * (one job, with its attempt), or leases expired with no attempt left (the reaper: many
 * jobs, no attempt, error 'lease expired').
 */
export interface DeadEvent extends QueueEventBase<'dead'> {
  /** The failed attempt; undefined when the reaper moved the jobs. */
  readonly attempt: number | undefined;
  /** The error's text, cut to 1 KiB. */
  readonly error: string;
}

/** A dead job went back to pending with a fresh retry budget. */
export type RetriedEvent = SingleJobEvent<'retried'>;

/** A job was removed; `from` is the state it was in. */
export interface RemovedEvent extends SingleJobEvent<'removed'> {
  readonly from: RemovedFrom;
}

/** A running job's handler reported progress. P is the type the listener declares. */
export interface ProgressEvent<P = unknown> extends SingleJobEvent<'progress'> {
  readonly progress: P;
}

/**
 * A service the handler called limited it (it threw RateLimitedError): the job went back to
 * pending with its attempt unspent, and the queue or the job's lane is held back for `ms`.
 */
export interface ThrottledEvent extends SingleJobEvent<'throttled'> {
  /** The attempt (fencing token) that was limited; the job's budget did not pay for it. */
  readonly attempt: number;
  /** How long the queue or lane is held back (a longer hold already in force stays). */
  readonly ms: number;
  readonly scope: 'queue' | 'lane';
}

/** A lane was paused (pauseLane): workers claim nothing from it until it is resumed. `ids` is empty. */
export interface LanePausedEvent extends QueueEventBase<'lane-paused'> {
  readonly lane: string;
}

/** A paused lane was resumed (resumeLane). `ids` is empty. */
export interface LaneResumedEvent extends QueueEventBase<'lane-resumed'> {
  readonly lane: string;
}

/** A debounced enqueue replaced this waiting job's data and pushed its run-at back. */
export type DebouncedEvent = QueueEventBase<'debounced'>;
/** An admin changed this job (data, run-at, priority or lane) while it was not active. */
export type UpdatedEvent = QueueEventBase<'updated'>;
/** A chunk of a drain removed these pending and scheduled jobs. */
export type DrainedEvent = QueueEventBase<'drained'>;
/** A chunk of a clean removed these jobs of one state (raw.fields.state). */
export type CleanedEvent = QueueEventBase<'cleaned'>;
/** A chunk of an obliterate removed these jobs; the whole queue goes, chunk by chunk. */
export type ObliteratedEvent = QueueEventBase<'obliterated'>;
/** Retention trimmed these jobs from dead (by count or age) as others went in. */
export type TrimmedEvent = QueueEventBase<'trimmed'>;
/** A schedule was created or changed (raw.fields.key); `ids` holds its next occurrence. */
export type ScheduleUpsertedEvent = QueueEventBase<'schedule-upserted'>;
/** A schedule was removed (raw.fields.key); `ids` holds the occurrence removed with it, if any. */
export type ScheduleRemovedEvent = QueueEventBase<'schedule-removed'>;

/**
 * `emq doctor --repair` (or the doctor's library functions) mended state that broke an
 * invariant: one event per kind of repair in each script call that mended something.
 */
export interface RepairedEvent extends QueueEventBase<'repaired'> {
  /**
   * The doctor's finding kind (docs/cli.md): member-without-row, malformed-member,
   * in-two-sets, wrong-pending-set, orphan-row, lease-far-future, lane-index, lane-lists or
   * lane-active.
   */
  readonly kind: string;
  /** How many jobs, members or lanes this call mended (malformed members are only counted). */
  readonly count: number;
  /**
   * Aligned with `ids`: the state each job is in now (pending, active, schedule, dead), or
   * 'gone' for a member that had no row and left its set.
   */
  readonly to: readonly string[];
  /** The lanes mended, for the lane kinds (`<lane>`, or `<lane>@<level>` for lane-index); else empty. */
  readonly lanes: readonly string[];
}

/**
 * An entry of a type this version does not know (written by a newer EchoMQ): passed on
 * as read, so a listener for every event still sees it; `raw.type` names it.
 */
export interface UnrecognizedQueueEvent extends QueueEventBase<'unrecognized'> {
  readonly fields: Readonly<Record<string, string>>;
}

/** Each event type's payload, by type. */
export interface QueueEventPayloads<R = unknown, P = unknown> {
  enqueued: EnqueuedEvent;
  claimed: ClaimedEvent;
  extended: ExtendedEvent;
  completed: CompletedEvent<R>;
  failed: FailedEvent;
  dead: DeadEvent;
  released: ReleasedEvent;
  reaped: ReapedEvent;
  promoted: PromotedEvent;
  retried: RetriedEvent;
  removed: RemovedEvent;
  progress: ProgressEvent<P>;
  throttled: ThrottledEvent;
  'lane-paused': LanePausedEvent;
  'lane-resumed': LaneResumedEvent;
  debounced: DebouncedEvent;
  updated: UpdatedEvent;
  drained: DrainedEvent;
  cleaned: CleanedEvent;
  obliterated: ObliteratedEvent;
  trimmed: TrimmedEvent;
  'schedule-upserted': ScheduleUpsertedEvent;
  'schedule-removed': ScheduleRemovedEvent;
  repaired: RepairedEvent;
}

/** Any event of a queue's stream, discriminated by `type`. */
export type AnyQueueEvent<R = unknown, P = unknown> =
  QueueEventPayloads<R, P>[QueueEventType] | UnrecognizedQueueEvent;
