import type { JobId } from '../ids';
import type { JobBackoffPolicy } from '../queue/enqueue-options';

/**
 * When a schedule runs: a cron pattern read in a time zone (IANA name, default 'UTC'), or a
 * fixed interval in ms (its phase is kept: runs fall on the first run-at plus a multiple of it).
 */
export type ScheduleSpec = { readonly cron: string; readonly tz?: string } | { readonly everyMs: number };

/** What happens to a run missed while no process promoted it (docs/schedules.md, "Missed runs"). */
export interface ScheduleOptions {
  /**
   * 'once' (default): an overdue occurrence runs once when workers are back, then the schedule
   * resumes. 'skip': an occurrence overdue by more than missedAfterMs is replaced by the next
   * future run without running.
   */
  readonly missed?: 'once' | 'skip';
  /** How late an occurrence may be before 'skip' drops it: 0 to 31,622,400,000 ms. Default 60,000. */
  readonly missedAfterMs?: number;
}

/** The job each occurrence is: the enqueue options a schedule's jobs share. */
export interface ScheduleTemplate<T = unknown> {
  readonly data?: T;
  readonly name?: string;
  readonly maxAttempts?: number;
  readonly backoff?: JobBackoffPolicy;
  readonly lane?: string;
  readonly priority?: number;
  readonly timeoutMs?: number;
}

export interface UpsertScheduleResult {
  /**
   * 'unchanged': the same definition was stored already; nothing was written. 'updated': the
   * definition changed (its waiting occurrence was replaced; while a run is in progress only
   * the definition, which that run's advance then uses). 'created': a new schedule.
   */
  readonly outcome: 'created' | 'updated' | 'unchanged';
  /** The next occurrence's run-at; while a run is in progress, that run's planned run-at. */
  readonly nextRunAt: Date;
  /** The next occurrence; while a run is in progress (pending or claimed), that run. */
  readonly nextId: JobId;
}

/** A schedule as stored, with its next occurrence. */
export interface ScheduleView<T = unknown> {
  readonly key: string;
  readonly spec: { readonly cron: string; readonly tz: string } | { readonly everyMs: number };
  readonly options: Required<ScheduleOptions>;
  readonly template: ScheduleTemplate<T>;
  /** The next occurrence's run-at while it waits in the schedule set; null while it runs (or is lost). */
  readonly nextRunAt: Date | null;
  /** The id of the next occurrence (which may be running now); null when there is none. */
  readonly nextId: JobId | null;
}

/** A page of listSchedules, by key. */
export interface ScheduleListOptions {
  /** Only keys after this one (the last key of the previous page). */
  readonly after?: string;
  /** At most this many: 1 to 1,000. Default 100. */
  readonly limit?: number;
}

/** What @Schedule and the module option `schedules` declare: the spec, its options, and a short template. */
export type ScheduleDeclaration = ScheduleSpec &
  ScheduleOptions & {
    readonly data?: unknown;
    /** The job name; on a @Handle method it defaults to the method's name there. */
    readonly name?: string;
  };

/** A schedule upserted at every boot (module option `schedules`). */
export type DeclaredSchedule = ScheduleSpec &
  ScheduleOptions & {
    readonly queue: string;
    readonly key: string;
    readonly template?: ScheduleTemplate;
  };
