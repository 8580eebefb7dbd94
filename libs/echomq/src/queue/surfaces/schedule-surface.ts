import { checkJobData } from '../check-job-data';
import { advanceSchedule, type AdvanceOutcome } from '../../schedules/advance-schedule';
import { removeSchedule } from '../../schedules/remove-schedule';
import type { ScheduleDeps } from '../../schedules/schedule-deps';
import { getSchedule, listSchedules } from '../../schedules/schedule-reads';
import { ScheduleSweeper, type SweepResult } from '../../schedules/schedule-sweep';
import type {
  ScheduleListOptions,
  ScheduleOptions,
  ScheduleSpec,
  ScheduleTemplate,
  ScheduleView,
  UpsertScheduleResult,
} from '../../schedules/schedule-types';
import { upsertSchedule } from '../../schedules/upsert-schedule';
import { JobControlSurface } from './job-control-surface';

/** QueueService's schedules: upsert, remove and list cron and interval schedulers (docs/schedules.md). */
export abstract class ScheduleSurface extends JobControlSurface {
  private readonly sweeper = new ScheduleSweeper((ctx, key, expected, replace) =>
    advanceSchedule(ctx, key, expected, this.scheduleDeps(), replace),
  );

  /**
   * Creates or changes the schedule `key` of a queue: a cron pattern in a time zone
   * (`{ cron, tz }`, tz default 'UTC') or an interval (`{ everyMs }`), with its missed-run
   * policy, and the template every occurrence (an ordinary job in the schedule set) is made
   * from. The schedule has exactly one next occurrence whatever the processes and races:
   * upserting the same definition again is 'unchanged', a change replaces the waiting
   * occurrence (keeping its run-at when the timing is the same). While a run is in progress
   * (pending or claimed), only the definition is written; that run's advance uses it.
   * Bad input throws InvalidArgumentError before anything is sent.
   */
  async upsertSchedule<T>(
    queue: string,
    key: string,
    spec: ScheduleSpec & ScheduleOptions,
    template?: ScheduleTemplate<T>,
  ): Promise<UpsertScheduleResult> {
    const ctx = this.context(queue);
    const schema = this.definitions.get(queue)?.schemas.data;
    if (schema) await checkJobData(queue, schema, [{ data: template?.data }]);
    return upsertSchedule(ctx, key, spec, template, this.scheduleDeps());
  }

  /**
   * Removes a schedule and its next occurrence while that waits (scheduled or pending); one
   * already running finishes. False when there was no such schedule.
   */
  async removeSchedule(queue: string, key: string): Promise<boolean> {
    return removeSchedule(this.context(queue), key, this.repeatOnce());
  }

  /** The queue's schedules by key, a page at a time (`after` the last key seen; limit 1 to 1,000, default 100). */
  async listSchedules<T = unknown>(queue: string, options?: ScheduleListOptions): Promise<ScheduleView<T>[]> {
    return listSchedules<T>(this.context(queue), options);
  }

  /** One schedule with its next occurrence, or undefined when there is none by that key. */
  async getSchedule<T = unknown>(queue: string, key: string): Promise<ScheduleView<T> | undefined> {
    return getSchedule<T>(this.context(queue), key);
  }

  /**
   * @internal For the worker runtime; no stability promise.
   * Moves a schedule on from its next occurrence `expectedId` once a worker claimed it (active,
   * retrying, dead, finished) or it is gone; never from a pending one. With `replace`, drops it
   * unrun while it still waits ('skip'). `traceContext` is the claimed occurrence's (tracing on):
   * the next occurrence carries it even when the claimed one's row is gone before this reads it.
   */
  async advanceSchedule(
    queue: string,
    key: string,
    expectedId: string | null,
    replace = false,
    traceContext?: string,
  ): Promise<AdvanceOutcome> {
    return advanceSchedule(this.context(queue), key, expectedId, this.scheduleDeps(), replace, traceContext);
  }

  /**
   * @internal For the reaper and the boot of a worker; no stability promise.
   * One bounded pass of the schedule safety net over a queue (see ScheduleSweeper).
   */
  async sweepSchedules(queue: string, maxChunks: number): Promise<SweepResult> {
    return this.sweeper.sweep(this.context(queue), maxChunks);
  }

  private scheduleDeps(): ScheduleDeps {
    return {
      mintIds: (count) => this.mintIds(count),
      repeat: () => this.repeatOnce(),
      registerIfDue: (queue) => this.registerIfDue(queue),
      payloadLimitBytes: this.settings.maxPayloadBytes,
      tracing: this.settings.tracing,
    };
  }
}
